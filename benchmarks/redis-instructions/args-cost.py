# Part of benchmarks/redis-instructions (cycle.sh args): EVALSHA of return 1 with N keys and M arguments.
# Redis instructions of EVALSHA 'return 1' by number of keys/args (callgrind difference method, see args-cost.sh)
import socket, sys
port, n, nkeys, nargs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = socket.create_connection(('127.0.0.1', port)); f = s.makefile('rb')
def cmd(*args):
    out = b'*%d\r\n' % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b'$%d\r\n%s\r\n' % (len(a), a)
    s.sendall(out); line = f.readline()
    if line[:1] == b'$': f.read(int(line[1:-2]) + 2); 
sha = None
s.sendall(b'*3\r\n$6\r\nSCRIPT\r\n$4\r\nLOAD\r\n$8\r\nreturn 1\r\n'); line = f.readline(); sha = f.readline()[:-2].decode()
keys = ['lock:{uncontended}' + ':suffix%d' % i for i in range(nkeys)]
for i in range(n):
    args = ['myhost:12345:abcd:' + ('%022d' % i)] + ['3000'] * (nargs - 1)
    cmd('EVALSHA', sha, nkeys, *keys, *args)

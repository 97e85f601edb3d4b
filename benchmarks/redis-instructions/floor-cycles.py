# The bare floor's cycle against a Redis on PORT, one command at a time as the harness's lettuce-raw adapter sends
# them: SET key token NX PX 30000, then EVALSHA of the compare-and-delete script. Usage: floor-cycles.py PORT N
import socket, sys, random
port, n = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(('127.0.0.1', port)); f = s.makefile('rb')
def cmd(*args):
    out = b'*%d\r\n' % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b'$%d\r\n%s\r\n' % (len(a), a)
    s.sendall(out)
    return read()
def read():
    line = f.readline()
    t, rest = line[:1], line[1:-2]
    if t == b'$':
        l = int(rest)
        if l < 0: return None
        data = f.read(l + 2)[:-2]; return data
    if t == b'*':
        return [read() for _ in range(int(rest))]
    if t == b':': return int(rest)
    if t == b'-': raise Exception(rest)
    return rest
script = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
sha = cmd('SCRIPT', 'LOAD', script).decode()
prefix = '%016x:' % random.getrandbits(64)
for i in range(n):
    token = prefix + str(i)
    assert cmd('SET', 'uncontended', token, 'NX', 'PX', 30000) == b'OK'
    assert cmd('EVALSHA', sha, 1, 'uncontended', token) == 1

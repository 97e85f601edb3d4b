# Part of benchmarks/redis-instructions (cycle.sh): per-cycle instruction counts from two callgrind outputs.
import subprocess, sys, re
out, n1, n2, label = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
names = ['PROGRAM TOTALS', 'readQueryFromClient', 'evalShaCommand', 'luaCallFunction', 'lua_pcall', 'scriptCall', 'serverCron']
def read(n):
    text = subprocess.run(['callgrind_annotate', '--inclusive=yes', '--threshold=100', f'{out}/cg.{n}.out'], capture_output=True, text=True).stdout
    found = {}
    for line in text.splitlines():
        for name in names:
            if name not in found and (line.rstrip().endswith(name) or (':' + name + ' ') in line + ' '):
                found[name] = int(line.split()[0].replace(',', ''))
    return found
a, b = read(n1), read(n2)
print(label, 'Redis instructions per uncontended cycle (difference of', n2, 'and', n1, 'cycles):')
for name in names:
    if name in a and name in b:
        print(f'  {name:22s} {(b[name] - a[name]) / (n2 - n1):10.0f}')

# expected.py - derives paired.expected from Gekko's documented paired-single behaviour
# (Dolphin's hardware facts): each half rounded to single, fused multiply-adds rounded once,
# frC of a multiply rounded to 25 bits first, psq_l/psq_st quantisation through the GQRs, and
# the 750's fres/frsqrte tables. Independent of rpt's code: exact rational arithmetic.
#   python3 expected.py > paired.expected
import struct, math
from fractions import Fraction as F

def bits_d(d): return struct.unpack('>Q', struct.pack('>d', d))[0]
def from_bits_d(b): return struct.unpack('>d', struct.pack('>Q', b))[0]
def single(x):
    """Round a Fraction (or float) to the nearest-even single, as a float."""
    x = F(x)
    if x == 0: return 0.0
    sign = -1 if x < 0 else 1
    x = abs(x)
    e = math.floor(math.log2(x))
    while F(2) ** e > x: e -= 1
    while F(2) ** (e + 1) <= x: e += 1
    e = max(e, -126)
    q = x / F(2) ** (e - 23)
    n = math.floor(q); r = q - n
    if r > F(1, 2) or (r == F(1, 2) and n % 2 == 1): n += 1
    return sign * float(F(n) * F(2) ** (e - 23))
def f32(v): return single(F(v))
def fbits(f): return '%08x' % struct.unpack('>I', struct.pack('>f', f))[0]
def force25(d):
    b = bits_d(d)
    return from_bits_d((b & 0xFFFFFFFFF8000000) + (b & 0x8000000))
def fma_single(a, c, b): return single(F(a) * F(force25(c)) + F(b))
def show(name, f): print(f'{name} = {fbits(f)}')

print('ppc paired-single sample')
data = [(i * 37 + 5) & 0xff for i in range(16)]
acc = [0.0, 0.0]
for k in range(8):
    acc = [single(F(acc[0]) + F(data[2*k], 16)), single(F(acc[1]) + F(data[2*k+1], 16))]
show('sum_u8', single(F(acc[0]) + F(acc[1])))

inp = [f32(v) for v in (1.5, -2.25, 3.0, 0.125, 100.0, -0.5, 7.75, F(1, 1000))]
oth = [f32(F(v, 10)) for v in range(1, 9)]
for v in inp:
    show('scaled', single(F(v) * F(force25(0.5))))

acc = [0.0, 0.0]
for k in range(4):
    acc = [fma_single(inp[2*k], oth[2*k], acc[0]), fma_single(inp[2*k+1], oth[2*k+1], acc[1])]
show('dot', single(F(acc[0]) + F(acc[1])))

for v in inp:
    x = single(F(v)) * 256.0
    n = 0 if x != x else max(-32768, min(32767, int(x)))
    print('s16 = %08x' % (n & 0xffff))

a, b = inp[0:2], oth[0:2]
d = [single(F(a[0]) - F(b[0])), single(F(a[1]) - F(b[1]))]
sel = [a[i] if d[i] >= 0 else b[i] for i in range(2)]
out = sel + [a[1], b[0]] + [-abs(a[0]), -abs(a[1])]
for v in out:
    show('sel/merge/nabs', v)
def field(x, y): return 8 if x < y else 4 if x > y else 2
print('cr6:7 = %08x' % ((field(a[0], b[0]) << 4) | field(a[1], b[1])))

FRES = [(0x7ff800, 0x3e1), (0x783800, 0x3a7), (0x70ea00, 0x371), (0x6a0800, 0x340), (0x638800, 0x313),
        (0x5d6200, 0x2ea), (0x579000, 0x2c4), (0x520800, 0x2a0), (0x4cc800, 0x27f), (0x47ca00, 0x261),
        (0x430800, 0x245), (0x3e8000, 0x22a), (0x3a2c00, 0x212), (0x360800, 0x1fb), (0x321400, 0x1e5),
        (0x2e4a00, 0x1d1), (0x2aa800, 0x1be), (0x272c00, 0x1ac), (0x23d600, 0x19b), (0x209e00, 0x18b),
        (0x1d8800, 0x17c), (0x1a9000, 0x16e), (0x17ae00, 0x15b), (0x14f800, 0x15b), (0x124400, 0x143),
        (0x0fbe00, 0x143), (0x0d3800, 0x12d), (0x0ade00, 0x12d), (0x088400, 0x11a), (0x065000, 0x11a),
        (0x041c00, 0x108), (0x020c00, 0x106)]
RSQ = [(0x3ffa000, 0x7a4), (0x3c29000, 0x700), (0x38aa000, 0x670), (0x3572000, 0x5f2), (0x3279000, 0x584),
       (0x2fb7000, 0x524), (0x2d26000, 0x4cc), (0x2ac0000, 0x47e), (0x2881000, 0x43a), (0x2665000, 0x3fa),
       (0x2468000, 0x3c2), (0x2287000, 0x38e), (0x20c1000, 0x35e), (0x1f12000, 0x332), (0x1d79000, 0x30a),
       (0x1bf4000, 0x2e6), (0x1a7e800, 0x568), (0x17cb800, 0x4f3), (0x1552800, 0x48d), (0x130c000, 0x435),
       (0x10f2000, 0x3e7), (0x0eff000, 0x3a2), (0x0d2e000, 0x365), (0x0b7c000, 0x32e), (0x09e5000, 0x2fc),
       (0x0867000, 0x2d0), (0x06ff000, 0x2a8), (0x05ab800, 0x283), (0x046a000, 0x261), (0x0339800, 0x243),
       (0x0218800, 0x226), (0x0105800, 0x20b)]
def fres(x):  # normal positive inputs in range, as used here
    b = bits_d(x); exp = b & (0x7ff << 52); frac = b & ((1 << 52) - 1)
    i = frac >> 37; base, dec = FRES[i // 1024]
    return from_bits_d(((0x7fd << 52) - exp) | ((base - (dec * (i % 1024) + 1) // 2) << 29))
def frsqrte(x):
    b = bits_d(x); exp = b & (0x7ff << 52); frac = b & ((1 << 52) - 1)
    odd = (exp & (1 << 52)) == 0
    num = exp - (0x3fe << 52)
    e = ((0x3ff << 52) - (abs(num) // 2) * (1 if num >= 0 else -1)) & (0x7ff << 52)
    i = frac >> 37; base, dec = RSQ[i // 2048 + (16 if odd else 0)]
    return from_bits_d(e | ((base - dec * (i % 2048)) << 26))
x = 3.0
for v in (fres(x), fres(2 * x)):
    show('estimate', single(F(v)))  # a bit move here: the estimates have single precision
for v in (frsqrte(x), frsqrte(2 * x)):
    show('estimate', single(F(v)))
show('estimate', single(F(3 * x)))
print('done')

-- bench.lua - a workout of the Lua 5.4 interpreter for rpt's real-program suite: every part prints
-- results that depend on nothing but the code (no time, addresses or float exponents), so the
-- recompiled interpreter, Wine, qemu and the native build all print the same lines.

local checksum = 0
local function mix(v)
  local s = tostring(v)
  for i = 1, #s do checksum = (checksum * 31 + s:byte(i)) % 4294967296 end
end
local function out(name, ...)
  local parts = table.pack(...)
  for i = 1, parts.n do parts[i] = tostring(parts[i]); mix(parts[i]) end
  print(name .. ": " .. table.concat(parts, " "))
end

-- Recursion and integer arithmetic.
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
out("fib", fib(24), fib(30) % 1000)

local function ack(m, n)
  if m == 0 then return n + 1 end
  if n == 0 then return ack(m - 1, 1) end
  return ack(m - 1, ack(m, n - 1))
end
out("ackermann", ack(2, 300), ack(3, 5))

-- A sieve over a table.
local function sieve(n)
  local composite, count, last = {}, 0, 0
  for i = 2, n do
    if not composite[i] then
      count, last = count + 1, i
      for j = i * i, n, i do composite[j] = true end
    end
  end
  return count, last
end
out("sieve", sieve(200000))

-- Sorting with and without a comparator closure.
local seed = 12345
local function rand(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n
end
local t = {}
for i = 1, 20000 do t[i] = rand(100000) end
table.sort(t)
out("sort", t[1], t[10000], t[20000])
local people = {}
for i = 1, 3000 do people[i] = { name = "p" .. rand(1000), age = rand(90) } end
table.sort(people, function(a, b)
  if a.age ~= b.age then return a.age > b.age end
  return a.name < b.name
end)
out("sort by", people[1].name, people[1].age, people[3000].name, people[3000].age)

-- Strings: formatting, patterns, gsub with a function, rep, byte/char, reverse.
local words = {}
for w in ("the quick brown fox jumps over the lazy dog again and again"):gmatch("%a+") do
  words[#words + 1] = w
end
out("words", #words, table.concat(words, "-"):upper():sub(1, 30))
local text = string.rep("abc123 ", 2000)
local replaced, n = text:gsub("%d+", function(d) return "<" .. (tonumber(d) * 2) .. ">" end)
out("gsub", n, #replaced, replaced:sub(1, 24))
out("find", text:find("c1", 500, true), ("key = value"):match("^(%w+)%s*=%s*(%w+)$"))
out("format", string.format("%5d|%-6s|%05.1f|%x|%q", 42, "ab", 3.14159, 48879, "a\nb"))
local buf = {}
for i = 1, 500 do buf[#buf + 1] = string.char(65 + i % 26) end
local s = table.concat(buf)
out("reverse", s:reverse():sub(1, 12), s:byte(100), #s)

-- Closures, upvalues and varargs.
local function counter()
  local c = 0
  return function(step) c = c + (step or 1); return c end
end
local c1, c2 = counter(), counter()
for i = 1, 1000 do c1(); c2(2) end
out("closures", c1(), c2(), select("#", 1, nil, 3), select(2, "a", "b", "c"))

-- Metatables: a vector type with operators, __index inheritance, __tostring.
local Vec = {}
Vec.__index = Vec
local function vec(x, y) return setmetatable({ x = x, y = y }, Vec) end
Vec.__add = function(a, b) return vec(a.x + b.x, a.y + b.y) end
Vec.__mul = function(a, k) return vec(a.x * k, a.y * k) end
Vec.__eq = function(a, b) return a.x == b.x and a.y == b.y end
Vec.__tostring = function(v) return "(" .. v.x .. "," .. v.y .. ")" end
function Vec:dot(o) return self.x * o.x + self.y * o.y end
local acc = vec(0, 0)
for i = 1, 1000 do acc = acc + vec(i, -i) * 2 end
out("metatables", tostring(acc), acc:dot(vec(1, 1)), vec(1, 2) == vec(1, 2))
local Animal = {}
Animal.__index = Animal
function Animal.new(name) return setmetatable({ name = name }, Animal) end
function Animal:speak() return self.name .. " makes a sound" end
local Dog = setmetatable({}, { __index = Animal })
Dog.__index = Dog
function Dog.new(name) return setmetatable(Animal.new(name), Dog) end
function Dog:speak() return self.name .. " barks" end
out("inheritance", Animal.new("cat"):speak(), Dog.new("rex"):speak())

-- Coroutines: a generator and a pipeline.
local function gen(n)
  return coroutine.wrap(function() for i = 1, n do coroutine.yield(i * i) end end)
end
local sum = 0
for v in gen(1000) do sum = sum + v end
local producer = coroutine.create(function()
  for i = 1, 5 do coroutine.yield("item" .. i) end
  return "done"
end)
local got = {}
while true do
  local ok, v = coroutine.resume(producer)
  got[#got + 1] = v
  if coroutine.status(producer) == "dead" then break end
end
out("coroutines", sum, table.concat(got, ","))

-- Errors: pcall, error objects, xpcall with a handler, errors inside coroutines.
local ok, err = pcall(function() error({ code = 42 }) end)
out("pcall", ok, err.code)
ok, err = pcall(function() local x = nil; return x.field end)
out("pcall index", ok, (err:gsub("^.-:%d+: ", "")))
out("xpcall", xpcall(function() error("deep", 0) end, function(m) return "handled " .. m end))
local co = coroutine.create(function() error("in coroutine", 0) end)
out("coroutine error", coroutine.resume(co))
local depth = 0
local function recurse() depth = depth + 1; return recurse() + 1 end
ok = pcall(recurse)
out("stack overflow caught", ok, depth > 1000)

-- Integer and float arithmetic, conversions, math.
local fsum = 0.0
for i = 1, 100000 do fsum = fsum + 1 / i end
out("harmonic", string.format("%.10f", fsum))
out("math", math.floor(-3.5), math.ceil(-3.5), 7 // 2, -7 // 2, 7 % -3, 2 ^ 10, math.max(3, 9, 1), math.abs(-4))
out("integers", math.maxinteger // 3, 1 << 40, 0xff ~ 0x0f, 5 & 3, 5 | 3, ~0, math.tointeger(8.0))
out("conversion", tonumber("0x1f"), tonumber("  12  "), tonumber("1e2"), tostring(1 / 3):sub(1, 8), 10 / 4)
-- Square roots by Newton's method: glibc's PowerPC libm reads the FPSCR with mffsl, which the
-- qemu-ppc oracle rejects, so the bench calls no libm function but floor and ceil.
local function sqrt(v)
  local r = v > 1 and v / 2 or 1.0
  for _ = 1, 40 do r = (r + v / r) / 2 end
  return r
end
out("sqrt", string.format("%.6f %.6f", sqrt(2), sqrt(1e6 + 1)))

-- A small n-body in floats, printed at fixed precision.
local bodies = {
  { x = 0, y = 0, vx = 0, vy = 0, m = 1000 },
  { x = 100, y = 0, vx = 0, vy = 3, m = 1 },
  { x = -150, y = 20, vx = 0.5, vy = -2.5, m = 2 },
}
for step = 1, 2000 do
  for i = 1, #bodies do
    local a = bodies[i]
    for j = 1, #bodies do
      if i ~= j then
        local b = bodies[j]
        local dx, dy = b.x - a.x, b.y - a.y
        local d2 = dx * dx + dy * dy + 0.01
        local f = b.m / (d2 * sqrt(d2))
        a.vx, a.vy = a.vx + dx * f * 0.01, a.vy + dy * f * 0.01
      end
    end
  end
  for _, b in ipairs(bodies) do b.x, b.y = b.x + b.vx * 0.01, b.y + b.vy * 0.01 end
end
out("nbody", string.format("%.6f %.6f %.6f", bodies[2].x, bodies[2].y, bodies[3].vx))

-- Tables as maps: insertion, deletion, next, length.
local map = {}
for i = 1, 5000 do map["k" .. (i * 7 % 5000)] = i end
for i = 1, 5000, 3 do map["k" .. i] = nil end
local count, total = 0, 0
for k, v in pairs(map) do count = count + 1; total = total + v end
out("maps", count, total)

-- utf8 and string.pack.
out("utf8", utf8.len("héllo wörld"), utf8.char(72, 228, 8364), #utf8.char(128512))
out("pack", #string.pack("<i4i8d", 1, 2, 3.0), string.unpack("<i2", "\1\2"), string.format("%08x", string.unpack(">I4", "\0\1\2\3")))

-- load: compiling code at run time.
local f = load("local a, b = ... return a * b + 1")
out("load", f(6, 7), load("return 2 ^ 0.5")() > 1.41)

out("checksum", string.format("%08x", checksum))

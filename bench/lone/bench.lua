local function fib(n) if n<2 then return n end return fib(n-1)+fib(n-2) end
local t={} local s=0
for r=1,40 do s=s+fib(22) for i=1,20000 do t[i]=tostring(i)..r end table.sort(t) end
print(s)

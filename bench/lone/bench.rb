def fib(n) n<2 ? n : fib(n-1)+fib(n-2) end
s=0; 30.times{|r| s+=fib(20); a=(1..20000).map{|i| "#{i}#{r}"}; a.sort!; h={}; a.each{|x| h[x]=x.size}}
puts s

# A busy perl workload for bench/lost: two subroutines, about 2 s of CPU.
sub hot { my $s = 0; $s += $_ * 3 for 1 .. 2000; $s }
sub warm { my $s = 0; $s += $_ for 1 .. 1000; $s }
my $t = 0;
for (1 .. 30000) { $t += hot(); $t += warm(); }
print "$t\n";

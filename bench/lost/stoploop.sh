#!/bin/bash
# Records a command at 999 Hz while macprof is stopped 0.3 s of every
# second (kill -STOP/CONT, as a CPU quota does), for issue 28's lost samples.
# usage: bench/lost/stoploop.sh MACPROF OUT.folded -- CMD ARGS...
set -u
mp=$1 out=$2
shift 3
"$mp" record -F 999 -o "$out" -- "$@" 2> "$out.err" > /dev/null &
pid=$!
sleep 0.5
while kill -0 $pid 2> /dev/null; do
	kill -STOP $pid 2> /dev/null
	sleep 0.3
	kill -CONT $pid 2> /dev/null
	sleep 0.7
done
wait $pid

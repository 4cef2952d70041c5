set -u
cd /work/wt-lead
exe=build-u/cli/refinery
rm -rf /tmp/zs /tmp/zb1 /tmp/zb2; mkdir -p /tmp/zs
echo "load start: $(uptime)"
s=$(date +%s.%N)
for t in cpu gpu tpu; do for m in build-u/zoo/*.onnx build-u/zoo_real/*.onnx; do
  n=$(basename $(dirname $m))_$(basename $m)
  $exe optimize $m -o /tmp/zs/$t.$n --target $t --report /tmp/zs/$t.$n.json --quiet >/dev/null 2>&1 || echo "fail $t $m"
done; done
e=$(date +%s.%N); echo "singles: $(echo "$e - $s" | bc) s"
echo "load: $(uptime)"
/usr/bin/time -f "batch jobs1: %e s wall %U user %S sys" $exe batch build-u/zoo build-u/zoo_real -o /tmp/zb1 --target cpu,gpu,tpu --jobs 1 --quiet
echo "load: $(uptime)"
/usr/bin/time -f "batch jobs2: %e s wall %U user %S sys" $exe batch build-u/zoo build-u/zoo_real -o /tmp/zb2 --target cpu,gpu,tpu --jobs 2 --quiet
echo "load end: $(uptime)"

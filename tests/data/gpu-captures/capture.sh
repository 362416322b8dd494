#!/bin/bash
# How h200-driver580/ was made (part 1: 2026-11-29, part 2: 2026-11-30; the project's GPU
# machine, as root). It moves the machine's own CUDA libraries, ptxas and loader
# configuration away: run it ONLY on a machine that is thrown away afterwards. Writes
# NAME.log (stdout and stderr) and NAME.rc into $1 (default /tmp/cap); $2 is the part to run
# (1 or 2, default 1). The tests never run it.
set +e
C=${1:-/tmp/cap}; PART=${2:-1}; W=$(mktemp -d); mkdir -p "$C"
export PYTHONUNBUFFERED=1
cap() { name=$1; shift; timeout 150 "$@" > "$C/$name.log" 2>&1; echo $? > "$C/$name.rc"; }
SP=$(python3 -c "import nvidia, os; print(os.path.dirname(list(nvidia.__path__)[0]))")
LIBS=$(find / \( -path /proc -o -path /sys \) -prune -o \( -name 'libcudnn*.so*' \
       -o -name 'libcuda.so*' -o -name 'libnvidia-ml.so*' -o -name 'libcublas*.so*' \
       -o -name 'libnvidia-ptxjitcompiler*' \) -print 2>/dev/null)
hide() {  # move the files named by the regex $1 away (not the read-only driver folder)
  mkdir -p /tmp/hidden
  echo "$LIBS" | grep -E "$1" | grep -v '^/usr/local/nvidia' | while read -r f; do
    mkdir -p "/tmp/hidden$(dirname "$f")"; mv "$f" "/tmp/hidden$f"; done; ldconfig; }
unhide() { (cd /tmp/hidden && find . -type f -o -type l | while read -r f; do
    mv "$f" "/${f#./}"; done); ldconfig; }
ld_off() {  # the loader configuration that names the driver's folder, away
  mkdir -p /tmp/ldhide
  for f in /etc/ld.so.conf.d/*; do grep -q -i nvidia "$f" && mv "$f" /tmp/ldhide/; done; }
ld_on() { mv /tmp/ldhide/* /etc/ld.so.conf.d/; ldconfig; }
CONV="import jax, jax.numpy as jnp
print(jax.devices())
x = jnp.ones((8,64,56,56)); w = jnp.ones((64,64,3,3))
print(jax.lax.conv(x, w, (1,1), 'SAME').block_until_ready().shape)"
WORK="import jax, jax.numpy as jnp
x = jnp.ones((8,64,56,56)); w = jnp.ones((64,64,3,3))
print(jax.lax.conv(x, w, (1,1), 'SAME').block_until_ready().shape)
a = jnp.ones((2048, 2048)); print(float((a @ a).sum()))
print(float(jnp.exp(jnp.linspace(0, 1, 1000)).sum()))"

# a kernel, for the parts' programs
cat > "$W/k.cu" <<'CU'
#include <cstdio>
extern "C" __global__ void add_one(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
int main() {
  float *d; cudaError_t e = cudaMalloc(&d, 1024 * sizeof(float));
  if (e == cudaSuccess) { add_one<<<4, 256>>>(d, 1024); e = cudaGetLastError(); }
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    fprintf(stderr, "CUDA error: %s (%s)\n", cudaGetErrorString(e), cudaGetErrorName(e));
    return 1; }
  printf("ok\n"); return 0; }
CU

if [ "$PART" = 1 ]; then
cap jax-success python3 -c "
import jax, jax.numpy as jnp
print(jax.devices())
x = jnp.ones((4096, 4096)); print(float((x @ x).sum()))
print(jax.lax.conv(jnp.ones((1,3,32,32)), jnp.ones((8,3,3,3)), (1,1), 'SAME').shape)"
cap jax-oom python3 -c "
import jax, jax.numpy as jnp
x = jnp.ones((60_000_000_000,), jnp.float32); print(float(x.sum()))"
cap jax-visible-none env CUDA_VISIBLE_DEVICES= python3 -c "import jax; print(jax.devices())"
cap jax-visible-bad env CUDA_VISIBLE_DEVICES=7 python3 -c "import jax; print(jax.devices('cuda'))"
cap torch-oom python3 -c "
import torch; x = torch.empty(200 * 2**30, dtype=torch.uint8, device='cuda'); print(x.shape)"
cap jax-mem-fraction env XLA_PYTHON_CLIENT_MEM_FRACTION=.001 python3 -c "$CONV"
cap jax-prealloc-all env XLA_PYTHON_CLIENT_MEM_FRACTION=.9999 python3 -c "$WORK"

cap jax-xla-flags-unknown env XLA_FLAGS=--xla_gpu_enable_bogus_feature=true python3 -c "
import jax.numpy as jnp; print(float(jnp.ones(3).sum()))"
cap jax-xla-flags-tf-flag env XLA_FLAGS=--tf_xla_auto_jit=2 python3 -c "
import jax.numpy as jnp; print(float(jnp.ones(3).sum()))"

# a second process beside one that holds 75 % of the GPU
python3 -c "
import jax, jax.numpy as jnp, time
jnp.ones((1024,)).block_until_ready(); print('ready', flush=True); time.sleep(60)" > "$W/holder" 2>&1 &
H=$!
for _ in $(seq 40); do grep -q ready "$W/holder" && break; sleep 1; done
cap jax-second-process python3 -c "$WORK"
cap torch-second-process python3 -c "
import torch; x = torch.empty(60 * 2**30, dtype=torch.uint8, device='cuda'); print(x.shape)"
kill $H; wait $H 2>/dev/null

# kernels for another GPU, and kernels' own bugs
nvcc -gencode arch=compute_100,code=sm_100 -o "$W/k100" "$W/k.cu"
nvcc -cubin -arch=sm_100 -o "$W/k100.cubin" "$W/k.cu"
cap nvcc-sm100-on-sm90 "$W/k100"
cap cupy-cubin-sm100 python3 -c "
import cupy as cp
f = cp.RawModule(path='$W/k100.cubin').get_function('add_one')
x = cp.zeros(1024, dtype=cp.float32); f((4,), (256,), (x, cp.int32(1024))); print(float(x.sum()))"
cap cupy-illegal-address python3 -c "
import cupy as cp
k = cp.RawKernel(r'''extern \"C\" __global__ void bad(float *x) { x[threadIdx.x + (1ull << 40)] = 1.0f; }''', 'bad')
x = cp.zeros(16, dtype=cp.float32); k((1,), (32,), (x,)); cp.cuda.Device().synchronize(); print('no error')"
cap torch-device-assert python3 -c "
import torch
x = torch.zeros(3, device='cuda'); i = torch.tensor([5], device='cuda'); print(x[i].cpu())"

# libraries hidden
hide 'libcudnn'
cap jax-cudnn-missing python3 -c "$CONV"
unhide
hide 'libcublas'
cap jax-cublas-missing python3 -c "
import jax, jax.numpy as jnp
x = jnp.ones((512, 512)); print(float((x @ x).sum()))"
cap torch-cublas-missing python3 -c "
import torch; x = torch.ones(512, 512, device='cuda'); print((x @ x).sum().item())"
unhide

# the driver's libraries off the loader path (a container without the NVIDIA runtime's)
ld_off
hide 'libcuda\.so|libnvidia-ml'
cap jax-libcuda-missing env LD_LIBRARY_PATH= python3 -c "import jax; print(jax.devices())"
cap jax-libcuda-missing-gpu env LD_LIBRARY_PATH= python3 -c "import jax; print(jax.devices('cuda'))"
cap torch-libcuda-missing env LD_LIBRARY_PATH= python3 -c "
import torch; print(torch.cuda.is_available()); torch.zeros(1, device='cuda')"
cap nvidia-smi-without-libnvidia-ml env LD_LIBRARY_PATH= nvidia-smi
unhide; ld_on

# CUDA's forward-compatibility libcuda against the loaded kernel driver
nvcc -gencode arch=compute_90,code=compute_90 -o "$W/kptx" "$W/k.cu"
COMPAT=/usr/local/cuda-13.0/compat:$LD_LIBRARY_PATH
cap compat-libcuda-nvcc env LD_LIBRARY_PATH=$COMPAT "$W/kptx"
cap compat-libcuda-jax env LD_LIBRARY_PATH=$COMPAT python3 -c "import jax; print(jax.devices('cuda'))"
cap compat-libcuda-torch env LD_LIBRARY_PATH=$COMPAT python3 -c "
import torch; print(torch.cuda.is_available()); print(torch.zeros(1, device='cuda'))"

# no ptxas anywhere
for f in $(find / \( -path /proc -o -path /sys \) -prune -o -name ptxas -type f -print 2>/dev/null); do
  mv "$f" "$f.hidden"; done
cap jax-no-ptxas python3 -c "$WORK"
for f in $(find / \( -path /proc -o -path /sys \) -prune -o -name 'libdevice*.bc' -print 2>/dev/null); do
  mv "$f" "$f.hidden"; done
cap jax-no-libdevice python3 -c "
import jax.numpy as jnp; print(float(jnp.exp(jnp.linspace(0, 1, 1000)).sum()))"
fi

if [ "$PART" = 2 ]; then
# PTX the driver must compile: its own (the control), a newer PTX ISA than the driver
# knows, PTX for a newer GPU (sm_100) than the H200
nvcc -ptx -arch=compute_90 -o "$W/k90.ptx" "$W/k.cu"
nvcc -ptx -arch=compute_100 -o "$W/k100.ptx" "$W/k.cu"
sed 's/^\.version .*/.version 9.9/' "$W/k90.ptx" > "$W/k90-isa99.ptx"
nvcc -gencode arch=compute_90,code=compute_90 -o "$W/kptx" "$W/k.cu"
LOADPTX="import sys, cupy as cp
f = cp.RawModule(path=sys.argv[1]).get_function('add_one')
x = cp.zeros(1024, dtype=cp.float32); f((4,), (256,), (x, cp.int32(1024))); print(float(x.sum()))"
cap cupy-ptx-success python3 -c "$LOADPTX" "$W/k90.ptx"
cap cupy-ptx-isa-too-new python3 -c "$LOADPTX" "$W/k90-isa99.ptx"
cap cupy-ptx-sm100-on-sm90 python3 -c "$LOADPTX" "$W/k100.ptx"

# the driver without its PTX JIT compiler (a container that mounts libcuda alone): the
# driver's other libraries linked into a folder of their own, the loader configuration
# that names the driver's folder removed, libnvidia-ptxjitcompiler moved away where it can be
DRV=$(mktemp -d)
ldconfig -p | awk '/libcuda\.so|libnvidia-/ {print $NF}' | grep -v ptxjitcompiler | \
  while read -r f; do ln -sf "$(readlink -f "$f")" "$DRV/$(basename "$f")"; done
ld_off
hide 'libnvidia-ptxjitcompiler'
{ echo "loader: $(ldconfig -p | grep -c ptxjitcompiler) ptxjitcompiler entries"; ls -l "$DRV"; } > "$C/ptxjit-hidden.txt"
cap nvcc-ptxjit-hidden env LD_LIBRARY_PATH="$DRV" "$W/kptx"
# (CuPy loading the same PTX ran to its end here: its process found the JIT compiler; not kept)
cap cupy-ptxjit-hidden env LD_LIBRARY_PATH="$DRV" python3 -c "$LOADPTX" "$W/k90.ptx"
unhide; ld_on

# cuBLAS and cuDNN creating their handles on a GPU whose memory a framework holds (as
# TensorFlow's preallocation does): PyTorch fills the GPU, then frees a few blocks into its
# own cache, which the libraries' own allocations cannot use
FILL="import torch
a = torch.ones(256, 256, device='cuda'); x = torch.ones(8, 64, 32, 32, device='cuda')
w = torch.ones(64, 64, 3, 3, device='cuda'); blocks = []
for size in (2**30, 2**24, 2**20):
    while True:
        try: blocks.append(torch.empty(size, dtype=torch.uint8, device='cuda'))
        except torch.OutOfMemoryError: break
del blocks[-16:]
print('driver free MiB:', torch.cuda.mem_get_info()[0] // 2**20, flush=True)"
cap torch-cublas-gpu-full python3 -c "$FILL
print((a @ a).sum().item())"
cap torch-cudnn-gpu-full python3 -c "$FILL
print(torch.nn.functional.conv2d(x, w, padding=1).sum().item())"
fi

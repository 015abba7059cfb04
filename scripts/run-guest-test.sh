#!/usr/bin/env bash
# The Linux driver in a real guest: builds drivers/linux against the installed Debian kernel's headers and the
# guest test program (tests/guest), packs them with busybox into an initramfs, and boots the kernel in a stock
# QEMU whose pe-vp device is `pe-vp qemu-device` (docs/qemu.md). The guest loads the module, runs the test,
# unloads and reloads the module, runs it again, runs a program that waits on a semaphore (the timeout, then the
# release), leaves that program stuck on the semaphore once more, reboots (QEMU resets the stuck device: the
# platform's hard reset drops the program), checks the device is at its power-on state and runs the GEMM
# again bit-exact, and powers off.
#
#   scripts/run-guest-test.sh [BUILD_DIR]      (default: ./build, which must hold a built pe-vp)
#
# Ends with "guest test: PASS" and status 0, or "guest test: FAIL: <what>" and status 1; 77 (skipped) only when
# the Debian packages it needs are missing and cannot be installed. PEVP_GUEST_TIMEOUT (seconds, default 600)
# bounds the QEMU run; the serial console goes to stdout and to BUILD_DIR/guest/console.log.
# PEVP_GUEST_KERNEL=/path/bzImage with PEVP_GUEST_KDIR=/its/build/tree boots a kernel of your own instead of the
# newest installed Debian kernel with headers.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
work="$build/guest"
timeout_s="${PEVP_GUEST_TIMEOUT:-600}"
pevp="$build/platform/pe-vp"

fail() { echo "guest test: FAIL: $*"; exit 1; }
skip() { echo "guest test: SKIPPED: $*"; exit 77; }

# ---- packages
packages=(qemu-system-x86 linux-image-amd64 linux-headers-amd64 busybox-static cpio gcc make libc6-dev kmod)
have_kernel_with_headers() {
  local k v
  for k in /boot/vmlinuz-*; do
    v="${k#/boot/vmlinuz-}"
    [ -e "/lib/modules/$v/build/Makefile" ] && return 0
  done
  return 1
}
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ] || ! have_kernel_with_headers; then
  echo "guest test: installing ${missing[*]:-a kernel with its headers}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
           "${packages[@]}"; } >"$build/guest-apt.log" 2>&1; then
    skip "could not install ${missing[*]} (see $build/guest-apt.log)"
  fi
fi

# ---- the kernel: yours, or the newest installed one whose headers are present
if [ -n "${PEVP_GUEST_KERNEL:-}" ]; then
  [ -n "${PEVP_GUEST_KDIR:-}" ] && [ -e "$PEVP_GUEST_KDIR/Makefile" ] ||
    fail "PEVP_GUEST_KERNEL needs PEVP_GUEST_KDIR, the kernel's build tree (its Makefile)"
  kernel="$PEVP_GUEST_KERNEL"
  kdir="$PEVP_GUEST_KDIR"
  kver="$(make -s -C "$kdir" kernelrelease 2>/dev/null || basename "$kernel")"
else
  kver=""
  for k in $(ls /boot/vmlinuz-* 2>/dev/null | sort -rV); do
    v="${k#/boot/vmlinuz-}"
    if [ -e "/lib/modules/$v/build/Makefile" ]; then kver="$v"; break; fi
  done
  [ -n "$kver" ] || skip "no /boot/vmlinuz-* with headers in /lib/modules/*/build"
  kernel="/boot/vmlinuz-$kver"
  kdir="/lib/modules/$kver/build"
fi
[ -r "$kernel" ] || fail "$kernel is not readable"
[ -x "$pevp" ] || fail "$pevp is missing: build the project first (scripts/build.sh)"
qemu="$(command -v qemu-system-x86_64)" || skip "qemu-system-x86_64 is not installed"
echo "guest test: kernel $kver, $("$qemu" --version | head -n 1)"

# ---- the module (cached per kernel in the build tree; kbuild rebuilds what changed)
mod_dir="$build/drivers/linux/$kver"
mkdir -p "$mod_dir"
make -s -C "$root/drivers/linux" KDIR="$kdir" PEVP_BUILD="$build" O_MOD="$mod_dir" \
  >"$mod_dir/build.log" 2>&1 || { cat "$mod_dir/build.log"; fail "the module did not build against $kver"; }
if grep -v "Skipping BTF generation" "$mod_dir/build.log" | grep -q "warning:"; then
  cat "$mod_dir/build.log"; fail "the module builds with warnings"
fi

# ---- the guest program (static, so the initramfs needs no C library) and its instruction stream
mkdir -p "$work/root"
guest_bin="$work/pevp_guest_test"
if [ ! -x "$guest_bin" ] || [ -n "$(find "$root/tests/guest" "$root/drivers/linux/uapi" -newer "$guest_bin" \
     -name '*.[ch]' | head -n 1)" ]; then
  gcc -static -O2 -std=gnu99 -Wall -Wextra -Werror -ffp-contract=off -o "$guest_bin" \
    "$root/tests/guest/pevp_guest_test.c" -lm || fail "the guest program did not build"
fi
for program in gemm stuck; do
  "$pevp" asm --gen MARIANA "$root/tests/guest/$program.pes" -o "$work/$program.bin" >/dev/null \
    || fail "pe-vp asm refused tests/guest/$program.pes"
done

# ---- the initramfs
initrd="$work/initramfs.cpio.gz"
rm -rf "$work/root"
mkdir -p "$work/root"/{bin,dev,proc,sys}
cp /bin/busybox "$work/root/bin/busybox"
cp "$mod_dir/pevp.ko" "$guest_bin" "$work/gemm.bin" "$work/stuck.bin" "$work/root/"
cat >"$work/root/init" <<'EOF'
#!/bin/busybox sh
# Boot 1: the tests, the module reloaded, the tests again, then a reboot, on which QEMU sends the device
# DEVICE_RESET. Boot 2: the device must be at its power-on state. A CMOS RAM byte (0x7a, unused by QEMU's pc
# machine and SeaBIOS) survives the reset and says which boot this is.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
cmos_get() { printf '\172' | dd of=/dev/port bs=1 seek=112 count=1 2>/dev/null
             dd if=/dev/port bs=1 skip=113 count=1 2>/dev/null | od -An -tu1 | tr -d ' '; }
cmos_set() { printf '\172' | dd of=/dev/port bs=1 seek=112 count=1 2>/dev/null
             printf "\\$(printf %o "$1")" | dd of=/dev/port bs=1 seek=113 count=1 2>/dev/null; }
boot="$(cmos_get)"
echo "pevp-init: start, boot mark ${boot:-?}, guest uptime $(cut -d' ' -f1 /proc/uptime) s"
for d in /sys/bus/pci/devices/*; do
  case "$(cat "$d/vendor"):$(cat "$d/device")" in
    0x1234:0x7065|0x1af4:0x1110) echo "pevp-init: PCI $(basename "$d") $(cat "$d/vendor"):$(cat "$d/device")";;
  esac
done
status=0
run() {
  insmod /pevp.ko || { echo "guest test: FAIL: insmod pevp.ko"; return 1; }
  [ -c /dev/pevp0 ] || { echo "guest test: FAIL: no /dev/pevp0 after insmod"; dmesg | tail -n 20; rmmod pevp; return 1; }
  /pevp_guest_test "$@"
  r=$?
  rmmod pevp || { echo "guest test: FAIL: rmmod pevp"; r=1; }
  return $r
}
case "$boot" in
  0)
    cmos_set 1
    echo "pevp-init: run 1"
    run /gemm.bin /dev/pevp0 || status=1
    echo "pevp-init: run 2, after unloading and reloading the module"
    run /gemm.bin /dev/pevp0 || status=1
    echo "pevp-init: a program waiting on a semaphore: the timeout, the release, then stuck again for the reset"
    run --stuck /stuck.bin /dev/pevp0 || status=1
    if ! dmesg | grep -q "faulted: rule 0x001 opcode.unknown"; then
      echo "guest test: FAIL: no dmesg line names the faulting instruction's rule"; status=1
    fi
    dmesg | grep -E "pevp|pe-vp" | sed 's/^/pevp-init: dmesg: /'
    echo "pevp-init: status $status"
    if [ "$status" = 0 ]; then
      echo "pevp-init: rebooting: QEMU resets the device, stuck on a semaphore"
      reboot -f
    fi
    cmos_set 0
    ;;
  1)
    cmos_set 2
    echo "pevp-init: run 3, after the device reset"
    run --after-reset /gemm.bin /dev/pevp0 || status=1
    echo "pevp-init: status $status"
    cmos_set 0
    ;;
  *)
    echo "guest test: FAIL: boot mark '$boot': the guest booted more often than planned"
    cmos_set 0
    ;;
esac
poweroff -f
EOF
chmod +x "$work/root/init"
(cd "$work/root" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd"

# ---- boot
log="$work/console.log"
echo "guest test: booting $kernel under TCG with pe-vp qemu-device (timeout ${timeout_s} s)"
start=$EPOCHREALTIME
first_init=""
set +e
timeout --kill-after=10 "$timeout_s" "$pevp" qemu-device --gen MARIANA -- \
  "$qemu" -accel tcg -m 512M \
  -object memory-backend-memfd,id=mem,size=512M,share=on -machine pc,memory-backend=mem \
  -nographic -nic none -kernel "$kernel" -initrd "$initrd" \
  -append "console=ttyS0 quiet panic=-1" </dev/null 2>&1 |
  while IFS= read -r line; do
    line="${line%$'\r'}"
    if [ -z "$first_init" ] && [[ "$line" == *"pevp-init: start"* ]]; then
      first_init=1
      echo "guest figure: boot, QEMU start to the first line of /init: $(awk -v a="$start" -v b="$EPOCHREALTIME" \
        'BEGIN { printf "%.1f", b - a }') s"
    fi
    echo "$line"
  done | tee "$log"
status=${PIPESTATUS[0]}
set -e

[ "$status" -ne 124 ] && [ "$status" -ne 137 ] || fail "the guest did not power off within ${timeout_s} s"
grep -q "pevp-init: start" "$log" || fail "the guest never reached /init (QEMU or pe-vp qemu-device status $status)"
grep -q "guest test: FAIL" "$log" && fail "inside the guest: $(grep -m1 "guest test: FAIL" "$log" | sed 's/^guest test: FAIL: //')"
[ "$(grep -c "^pevp-init: status 0" "$log")" = 2 ] || fail "the guest did not finish both boots (see $log)"
[ "$(grep -c "^guest test: PASS" "$log")" = 4 ] ||
  fail "expected four passing runs (before and after the reload, the stuck program, after the reset; see $log)"
grep -q "DEVICE_RESET: " "$log" && fail "the device reset failed: $(grep -m1 "DEVICE_RESET: " "$log")"
grep -q "left waiting on semaphore" "$log" || fail "the device was not left stuck before the reboot (see $log)"
[ "$status" -eq 0 ] || fail "pe-vp qemu-device exited with $status"
echo "guest test: PASS"

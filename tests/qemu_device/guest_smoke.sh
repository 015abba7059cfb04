#!/usr/bin/env bash
# pe-vp as a PCI device of a real guest: Debian's qemu-system-x86_64 (TCG) boots the installed Debian kernel with a
# busybox initramfs made here, under `pe-vp qemu-device`. The guest's /init prints what Linux found on the bus
# (/sys/bus/pci/devices/*/{vendor,device,class,resource}) and reads and writes the BARs through /dev/mem; this script
# checks the identity, the BAR sizes, a register's reset value, SBUF and HBM round trips, and the SEQ's vector.
# Skipped (77) without qemu-system-x86_64, a kernel in /boot, busybox-static or cpio.
#   guest_smoke.sh PE_VP
set -euo pipefail
pevp="$1"
qemu=$(command -v qemu-system-x86_64 || true)
kernel=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$qemu" ] || [ -z "$kernel" ] || [ ! -x /bin/busybox ] || ! command -v cpio >/dev/null; then
  echo "guest_smoke: needs qemu-system-x86, linux-image-amd64, busybox-static and cpio; skipped"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root/bin" "$work/root/proc" "$work/root/sys" "$work/root/dev"
cp /bin/busybox "$work/root/bin/"
cat > "$work/root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
for d in /sys/bus/pci/devices/*; do
  [ "$(cat $d/vendor)" = 0x1234 ] && [ "$(cat $d/device)" = 0x7065 ] || continue
  echo "GUEST: id $(cat $d/vendor) $(cat $d/device) $(cat $d/class)"
  sed -n '1p;3p;5p' $d/resource | while read start end flags; do echo "GUEST: bar $start $end $flags"; done
  echo 1 > $d/enable
  bar0=$(sed -n 1p $d/resource | cut -d' ' -f1); bar2=$(sed -n 3p $d/resource | cut -d' ' -f1)
  bar4=$(sed -n 5p $d/resource | cut -d' ' -f1)
  echo "GUEST: dma_id $(devmem $((bar0 + 0x100000)) 32)"
  devmem $((bar2 + 0x100)) 32 0xcafef00d; echo "GUEST: sbuf $(devmem $((bar2 + 0x100)) 32)"
  devmem $((bar4 + 0x40)) 32 0x5a5a5a5a; echo "GUEST: hbm $(devmem $((bar4 + 0x40)) 32)"
  devmem $((bar0 + 0x300c)) 32 2
  i=0; while [ $i -lt 16 ]; do devmem $((bar0 + 0x10000 + 4 * i)) 32 0; i=$((i+1)); done
  echo "GUEST: seq_status $(devmem $((bar0 + 0x3000)) 32)"
  # DMA from guest RAM: one descriptor in HBM (through BAR4) copies the 64 bytes at guest-physical 0x400 (the BIOS
  # data area, readable through /dev/mem) to SBUF 0x1000: src = 0x100_0000_0000 + 0x400, the ring at HBM's start
  # (DMA address 0x1_0000_0000).
  set -- 0x1 0 0 0 0x400 0x100 0x1000 0 64 1 1 8 0 0 0 0
  i=0; for w in "$@"; do devmem $((bar4 + 4 * i)) 32 $w; i=$((i+1)); done
  face=$((bar0 + 0x100000))
  devmem $((face + 0x1c)) 32 0; devmem $((face + 0x40)) 32 0; devmem $((face + 0x44)) 32 1
  devmem $((face + 0x48)) 32 1; devmem $((face + 0x54)) 32 1; devmem $((face + 0x50)) 32 1
  n=0; while [ "$(devmem $((face + 0x6c)) 32)" != 0x00000001 ] && [ $n -lt 100 ]; do n=$((n+1)); done
  same=yes; i=0
  while [ $i -lt 16 ]; do
    [ "$(devmem $((0x400 + 4 * i)) 32)" = "$(devmem $((bar2 + 0x1000 + 4 * i)) 32)" ] || same=no; i=$((i+1))
  done
  echo "GUEST: dma from guest RAM: completed $(devmem $((face + 0x6c)) 32), same bytes $same"
  echo "GUEST: sbuf word of the copy $(devmem $((bar2 + 0x1000)) 32)"
done
poweroff -f
INIT
chmod +x "$work/root/init"
(cd "$work/root" && find . | cpio -o -H newc 2>/dev/null | gzip > "$work/initrd.gz")
status=0
timeout 300 "$pevp" qemu-device --stats-json "$work/stats.json" -- "$qemu" -accel tcg -m 256M \
  -object memory-backend-memfd,id=mem,size=256M,share=on -machine pc,memory-backend=mem -nographic -no-reboot \
  -nic none -kernel "$kernel" -initrd "$work/initrd.gz" -append "console=ttyS0 quiet panic=-1" \
  > "$work/out" 2> "$work/err" || status=$?
grep -a "GUEST:" "$work/out" || true
fail() { echo "guest_smoke: FAIL: $*"; tail -20 "$work/out" "$work/err"; exit 1; }
[ "$status" -eq 0 ] || fail "pe-vp qemu-device exited with $status"
grep -aq "GUEST: id 0x1234 0x7065 0x120000" "$work/out" || fail "identity"
# BAR0 2 MiB, BAR2 and BAR4 64 MiB; flags 0x40200: IORESOURCE_MEM, 32-bit, not prefetchable.
bars=$(grep -a "GUEST: bar" "$work/out" | tr -d '\r' | while read -r _ _ start end flags; do
  printf '%d:%s ' $((end - start + 1)) "$flags"; done)
[ "$bars" = "2097152:0x0000000000040200 67108864:0x0000000000040200 67108864:0x0000000000040200 " ] ||
  fail "BAR sizes and flags: $bars"
grep -aq "GUEST: dma_id 0x0001444D" "$work/out" || fail "dma_id (the DMA face's reset value)"
grep -aq "GUEST: sbuf 0xCAFEF00D" "$work/out" || fail "SBUF round trip through BAR2"
grep -aq "GUEST: hbm 0x5A5A5A5A" "$work/out" || fail "HBM round trip through BAR4"
grep -aq "GUEST: seq_status 0x0000000A" "$work/out" || fail "the SEQ's error (idle, error) after an all-zero record"
grep -aq "GUEST: dma from guest RAM: completed 0x00000001, same bytes yes" "$work/out" || fail "DMA from guest RAM"
# The BIOS data area starts with the serial ports' I/O addresses (COM1 0x3f8): not zero, so the bytes were copied.
! grep -aq "GUEST: sbuf word of the copy 0x00000000" "$work/out" || fail "the copied bytes are all zero"
python3 - "$work/stats.json" <<'PY' || fail "statistics"
import json, sys
p = json.load(open(sys.argv[1]))["pcie"]
assert p["interrupts"]["seq_vector"] == 1, p["interrupts"]
assert p["guest_ram"]["syncs"] > 0 and p["guest_ram"]["refused"] == 0, p["guest_ram"]
assert p["link"]["malformed"] == 0, p["link"]
assert p["dma_to_host"]["read_bytes"] == 64 and p["dma_to_host"]["errors"] == 0, p["dma_to_host"]
PY
echo "guest_smoke: ok"

package vm

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
)

// GuestDisk is where the guest mounts its scratch disk (Options.DiskMiB); the programs find it in
// cgrouptest.GuestDiskEnv.
const GuestDisk = "/disk"

// diskSetupName is the program Run puts before the caller's when the guest has a disk; Run takes its
// result out of the ones it returns.
const diskSetupName = "disk-setup"

// diskModules are the virtio-blk driver's modules in load order (the kernel package ships no modules.dep).
var diskModules = []string{
	"drivers/virtio/virtio_ring.ko", "drivers/virtio/virtio.ko",
	"drivers/virtio/virtio_pci_legacy_dev.ko", "drivers/virtio/virtio_pci_modern_dev.ko",
	"drivers/virtio/virtio_pci.ko", "drivers/block/virtio_blk.ko",
}

// withDisk creates the sparse raw image of opt.DiskMiB in opt.Dir and returns it, the modules to pack,
// and the programs with the set-up first: load the modules, make an ext2 filesystem on /dev/vda (busybox
// mke2fs; the kernel's built-in ext4 driver mounts it) and mount it at GuestDisk. Every program gets
// GuestDiskEnv.
func (g Guest) withDisk(progs []Program, opt Options) (image string, files []File, out []Program, err error) {
	image = filepath.Join(opt.Dir, "disk.img")
	f, err := os.Create(image)
	if err != nil {
		return "", nil, nil, fmt.Errorf("guest disk: %w", err)
	}
	err = f.Truncate(int64(opt.DiskMiB) << 20)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", nil, nil, fmt.Errorf("guest disk %s: %w", image, err)
	}
	mods, err := moduleDir(g)
	if err != nil {
		return "", nil, nil, err
	}
	var insmod []string
	for _, m := range diskModules {
		files = append(files, File{Guest: "/modules/" + filepath.Base(m), Host: filepath.Join(mods, "kernel", m), Mode: 0o644})
		insmod = append(insmod, "insmod /modules/"+filepath.Base(m))
	}
	script := strings.Join(insmod, " && ") +
		" && i=0; while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done" +
		" && busybox mke2fs -q -m 0 /dev/vda && mkdir -p " + GuestDisk + " && mount -t ext4 /dev/vda " + GuestDisk
	env := cgrouptest.GuestDiskEnv + "=" + GuestDisk
	out = append(out, Program{Name: diskSetupName, Path: "/bin/sh", Args: []string{"-c", script}})
	for _, p := range progs {
		p.Env = append(append([]string{}, p.Env...), env)
		out = append(out, p)
	}
	return image, files, out, nil
}

// disk returns the programs and files with the disk's set-up added and qemu's arguments for the disk
// (withDisk), or them unchanged and no arguments without Options.DiskMiB.
func (g Guest) disk(progs []Program, files []File, opt Options) ([]Program, []File, []string, error) {
	if opt.DiskMiB <= 0 {
		return progs, files, nil, nil
	}
	image, more, out, err := g.withDisk(progs, opt)
	if err != nil {
		return nil, nil, nil, err
	}
	all := append([]File{}, files...)
	for _, f := range more {
		if !slices.ContainsFunc(files, func(g File) bool { return g.Guest == f.Guest }) { // a module the caller packs too
			all = append(all, f)
		}
	}
	// qemu's option syntax splits on commas: a comma in the path (a subtest's name) is written twice.
	return out, all, []string{"-drive", "file=" + strings.ReplaceAll(image, ",", ",,") + ",if=virtio,format=raw,cache=unsafe"}, nil
}

// takeDiskSetup checks the disk set-up's result (the first) and returns the others.
func takeDiskSetup(res []Result) ([]Result, error) {
	if len(res) == 0 || res[0].Name != diskSetupName {
		return res, fmt.Errorf("%w: no %s result", ErrGuest, diskSetupName)
	}
	if res[0].Exit != 0 {
		return res[1:], fmt.Errorf("%w: %s: exit %d: %s", ErrGuest, diskSetupName, res[0].Exit, res[0].Output)
	}
	return res[1:], nil
}

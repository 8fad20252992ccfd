// Package statfs observes the disk signals: nodefs (the filesystem holding the kubelet's root directory)
// and imagefs (the filesystem holding the container runtime's root), bytes and inodes, through the
// one-method Statfser so tests can supply numbers without mounting filesystems.
//
// The kubelet's formulas (cAdvisor RootFsInfo / CRI ImageFsInfo): available = f_bavail × f_frsize,
// capacity = f_blocks × f_frsize, inodesFree = f_ffree, inodes = f_files. imagefs is "dedicated" when its
// device differs from nodefs'; containerfs.* equals imagefs.* because writable layers are not split here.
// A path that cannot be statted yields an error and no observation, never zeros.
package statfs

//! The mounts where reading a path may wait without end: a network or FUSE
//! filesystem whose server stops answering (NFS on a hard mount, SMB,
//! sshfs, an automount whose server is gone). Paths on the machine's own
//! filesystems are resolved where the call is decided; a path whose walk
//! reaches one of these is resolved where waiting holds up no one else.
//!
//! Read from `/proc/self/mountinfo` (the mounts Warden itself sees), at
//! most once a second. What is not known to be local may hang: a type this
//! list does not name, or a table that cannot be read, is taken as remote.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Filesystems on the machine itself: reading them never waits on a server.
const LOCAL: &[&str] = &[
    "ext2",
    "ext3",
    "ext4",
    "xfs",
    "btrfs",
    "f2fs",
    "jfs",
    "reiserfs",
    "zfs",
    "bcachefs",
    "nilfs2",
    "vfat",
    "msdos",
    "exfat",
    "ntfs",
    "ntfs3",
    "hfs",
    "hfsplus",
    "iso9660",
    "udf",
    "squashfs",
    "erofs",
    "overlay",
    "tmpfs",
    "ramfs",
    "devtmpfs",
    "proc",
    "sysfs",
    "cgroup",
    "cgroup2",
    "devpts",
    "mqueue",
    "hugetlbfs",
    "debugfs",
    "tracefs",
    "securityfs",
    "pstore",
    "bpf",
    "configfs",
    "fusectl",
    "binfmt_misc",
    "nsfs",
    "efivarfs",
    "selinuxfs",
    "rpc_pipefs",
];

/// How long a reading of the mount table is used before it is read again.
const FRESH: Duration = Duration::from_secs(1);

/// The mount points of filesystems that may not answer.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Remote {
    points: Vec<PathBuf>,
    /// The table could not be read: every path may hang.
    unknown: bool,
}

impl Remote {
    /// The remote mounts of a `/proc/self/mountinfo` text.
    pub(crate) fn of_mountinfo(text: &str) -> Remote {
        let mut points = Vec::new();
        for line in text.lines() {
            // `id parent dev root point options [optional...] - type source super`
            let Some((mount, filesystem)) = line.split_once(" - ") else { continue };
            let (Some(point), Some(kind)) = (mount.split(' ').nth(4), filesystem.split(' ').next()) else {
                continue;
            };
            if !LOCAL.contains(&kind) {
                points.push(PathBuf::from(unescape(point)));
            }
        }
        Remote { points, unknown: false }
    }

    /// Whether reading `path` (absolute) may wait on one of these mounts:
    /// the walk to it passes a remote mount point.
    pub(crate) fn reaches(&self, path: &Path) -> bool {
        self.unknown || self.points.iter().any(|point| path.starts_with(point))
    }
}

/// The kernel writes a space, tab, line feed and backslash in a mount
/// point as `\040`, `\011`, `\012` and `\134`.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).filter(|digits| bytes[i] == b'\\' && digits.iter().all(u8::is_ascii_digit));
        match octal.and_then(|digits| u8::from_str_radix(std::str::from_utf8(digits).ok()?, 8).ok()) {
            Some(byte) => {
                out.push(byte);
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The remote mounts Warden sees now (read again at most once a second).
pub(crate) fn remote() -> Arc<Remote> {
    static TABLE: Mutex<Option<(Instant, Arc<Remote>)>> = Mutex::new(None);
    let mut table = warden_sync::lock(&TABLE);
    if let Some((read, remote)) = table.as_ref()
        && read.elapsed() < FRESH
    {
        return remote.clone();
    }
    let remote = Arc::new(match std::fs::read_to_string("/proc/self/mountinfo") {
        Ok(text) => Remote::of_mountinfo(&text),
        Err(_) => Remote { points: Vec::new(), unknown: true },
    });
    *table = Some((Instant::now(), remote.clone()));
    remote
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_fuse_and_unknown_filesystems_are_remote_and_local_ones_are_not() {
        let mountinfo = "\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
23 22 0:21 / /proc rw,nosuid - proc proc rw
40 22 0:35 / /home/u/nfs rw,relatime shared:20 - nfs4 server:/export rw,vers=4.2
41 22 0:36 / /mnt/with\\040space rw - fuse.sshfs u@h:/ rw,user_id=0
42 22 0:37 / /auto rw - autofs systemd-1 rw
43 22 0:38 / /tmp rw - tmpfs tmpfs rw
44 22 0:39 / /odd rw - somethingnew x rw
not a mountinfo line
";
        let remote = Remote::of_mountinfo(mountinfo);
        let points: Vec<&str> = remote.points.iter().filter_map(|p| p.to_str()).collect();
        assert_eq!(points, ["/home/u/nfs", "/mnt/with space", "/auto", "/odd"]);
        assert!(remote.reaches(Path::new("/home/u/nfs/a/b")));
        assert!(remote.reaches(Path::new("/home/u/nfs")));
        assert!(!remote.reaches(Path::new("/home/u/nfsother")), "a mount point is a whole component");
        assert!(remote.reaches(Path::new("/mnt/with space/x")));
        assert!(!remote.reaches(Path::new("/tmp/x")));
        assert!(!remote.reaches(Path::new("/home/u/notes")));
        assert!(Remote { points: Vec::new(), unknown: true }.reaches(Path::new("/tmp")));
    }

    #[test]
    fn this_machines_table_is_read() {
        let remote = remote();
        assert!(!remote.unknown, "/proc/self/mountinfo is readable on Linux");
        assert!(!remote.reaches(Path::new("/proc/self")), "proc is local");
    }
}

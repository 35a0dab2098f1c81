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
    /// The remote mounts of a `/proc/self/mountinfo` text. An overlay
    /// counts as remote when one of its layers lies on a remote mount: a
    /// lookup in it reads its lower layers.
    pub(crate) fn of_mountinfo(text: &str) -> Remote {
        let mut points = Vec::new();
        let mut overlays = Vec::new();
        for line in text.lines() {
            // `id parent dev root point options [optional...] - type source super`
            let Some((mount, filesystem)) = line.split_once(" - ") else { continue };
            let mut filesystem = filesystem.split(' ');
            let (Some(point), Some(kind)) = (mount.split(' ').nth(4), filesystem.next()) else {
                continue;
            };
            let point = PathBuf::from(unescape(point));
            if kind == "overlay" {
                overlays.push((point, filesystem.nth(1).map(overlay_layers).unwrap_or_default()));
            } else if !LOCAL.contains(&kind) {
                points.push(point);
            }
        }
        let mut remote = Remote { points, unknown: false };
        // An overlay may stack on another whose layers are remote.
        while let Some(at) = overlays.iter().position(|(_, layers)| layers.iter().any(|layer| remote.reaches(layer))) {
            let (point, _) = overlays.swap_remove(at);
            remote.points.push(point);
        }
        remote
    }

    /// Whether reading `path` (absolute) may wait on one of these mounts:
    /// the walk to it passes a remote mount point.
    pub(crate) fn reaches(&self, path: &Path) -> bool {
        self.unknown || self.points.iter().any(|point| path.starts_with(point))
    }
}

/// The directories an overlay's super options name: `lowerdir` (its layers
/// split at `:`, which a path escapes as `\:`), `lowerdir+`, `datadir+`,
/// `upperdir` and `workdir`.
fn overlay_layers(options: &str) -> Vec<PathBuf> {
    let mut layers = Vec::new();
    for option in options.split(',') {
        let Some((key, value)) = option.split_once('=') else { continue };
        let value = unescape(value);
        match key {
            "lowerdir" => {
                let mut layer = String::new();
                let mut chars = value.chars();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => layer.extend(chars.next()),
                        ':' => layers.push(PathBuf::from(std::mem::take(&mut layer))),
                        c => layer.push(c),
                    }
                }
                layers.push(PathBuf::from(layer));
            }
            "lowerdir+" | "datadir+" | "upperdir" | "workdir" => layers.push(PathBuf::from(value)),
            _ => {}
        }
    }
    layers.retain(|layer| layer.is_absolute());
    layers
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
    fn an_overlay_with_a_layer_on_a_remote_mount_is_remote() {
        let mountinfo = "\
22 1 8:1 / / rw - ext4 /dev/sda1 rw
40 22 0:35 / /srv/nfs rw - nfs4 server:/export rw
50 22 0:50 / /merged rw - overlay overlay rw,lowerdir=/var/lower1:/srv/nfs/lower,upperdir=/var/up,workdir=/var/work
51 22 0:51 / /stacked rw - overlay overlay rw,lowerdir=/merged/x,upperdir=/var/up2,workdir=/var/work2
52 22 0:52 / /local rw - overlay overlay rw,lowerdir=/var/a\\134:b:/var/c,upperdir=/var/up3,workdir=/var/w3
53 22 0:53 / /new rw - overlay overlay rw,lowerdir+=/var/l,datadir+=/srv/nfs/data
54 22 0:54 / /escaped rw - overlay overlay rw,lowerdir=/srv/nfs\\134:x,upperdir=/var/u4,workdir=/var/w4
";
        let remote = Remote::of_mountinfo(mountinfo);
        let mut points: Vec<&str> = remote.points.iter().filter_map(|p| p.to_str()).collect();
        points.sort_unstable();
        assert_eq!(points, ["/merged", "/new", "/srv/nfs", "/stacked"]);
        assert!(!remote.reaches(Path::new("/local/x")));
        // `/srv/nfs\:x` is the directory `nfs:x` beside the mount, not in it.
        assert!(!remote.reaches(Path::new("/escaped/x")));
        assert_eq!(
            overlay_layers("rw,lowerdir=/var/a\\134:b:/var/c,upperdir=/u,workdir=/w,index=off"),
            ["/var/a:b", "/var/c", "/u", "/w"].map(PathBuf::from)
        );
    }

    #[test]
    fn this_machines_table_is_read() {
        let remote = remote();
        assert!(!remote.unknown, "/proc/self/mountinfo is readable on Linux");
        assert!(!remote.reaches(Path::new("/proc/self")), "proc is local");
    }
}

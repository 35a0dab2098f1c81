//! Arguments handed to a launched process through a file descriptor instead
//! of its argv: exec refuses an argument over 128 KiB or an argv over
//! `ARG_MAX` with E2BIG, and a carved Landlock plan (one path per entry of a
//! crowded directory) or many `--setenv` easily exceed that. A descriptor
//! has no such limit, and what it holds does not show in `ps` either.

use std::os::fd::{OwnedFd, RawFd};

/// A sealed in-memory file holding `data`, read from its start.
///
/// It is close-on-exec: only a spawner that calls [`inherit`] for it between
/// fork and exec passes it on, so no other process started meanwhile gets
/// it. Its number is 3 or more, never one of the standard streams.
#[cfg(target_os = "linux")]
pub(crate) fn sealed(name: &str, data: &[u8]) -> std::io::Result<OwnedFd> {
    use std::io::{Seek, Write};
    use std::os::fd::{AsRawFd, FromRawFd};

    let name = std::ffi::CString::new(name).map_err(std::io::Error::other)?;
    // MFD_NOEXEC_SEAL (Linux 6.3+) keeps kernels that insist on it happy;
    // older ones do not know it (EINVAL) and get the plain flags.
    let flags = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
    // SAFETY: `name` is a valid NUL-terminated string; memfd_create takes no other pointer.
    let mut raw = unsafe { libc::memfd_create(name.as_ptr(), flags | libc::MFD_NOEXEC_SEAL) };
    if raw < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
        // SAFETY: as above.
        raw = unsafe { libc::memfd_create(name.as_ptr(), flags) };
    }
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `raw` was just created here and is owned by nothing else.
    let mut fd = unsafe { OwnedFd::from_raw_fd(raw) };
    if raw < 3 {
        // Warden started with a standard stream closed: the child's stdio
        // setup would overwrite a descriptor numbered 0 to 2.
        // SAFETY: F_DUPFD_CLOEXEC on a descriptor owned here takes no pointer.
        let moved = unsafe { libc::fcntl(raw, libc::F_DUPFD_CLOEXEC, 3) };
        if moved < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `moved` is a fresh duplicate owned by nothing else.
        fd = unsafe { OwnedFd::from_raw_fd(moved) };
    }
    let mut file = std::fs::File::from(fd);
    file.write_all(data)?;
    // Sealed, the contents cannot change between this check and the read.
    let seals = libc::F_SEAL_WRITE | libc::F_SEAL_GROW | libc::F_SEAL_SHRINK | libc::F_SEAL_SEAL;
    // SAFETY: F_ADD_SEALS on a descriptor owned here takes no pointer.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    file.rewind()?;
    Ok(OwnedFd::from(file))
}

/// Elsewhere there is no sandbox to launch (see `launch::choose`).
#[cfg(not(target_os = "linux"))]
pub(crate) fn sealed(_name: &str, _data: &[u8]) -> std::io::Result<OwnedFd> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// Lets `fd` (one of [`Prepared::fds`](crate::launch::Prepared::fds)) cross
/// the coming exec, read from its start.
///
/// Call it in the child, between fork and exec (`pre_exec`): there it only
/// affects that child. It makes two system calls and allocates nothing, so
/// it is safe there. The start matters when the same descriptor is handed
/// to a second process: the read position is shared.
pub fn inherit(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl and lseek take no pointers; a bad descriptor fails with EBADF.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::lseek(fd, 0, libc::SEEK_SET) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Reads the whole of `fd`, which this process inherited, and closes it.
///
/// `text` is a descriptor number from the command line; 0 to 2 are refused
/// (they are the standard streams, never a plan).
pub(crate) fn read_inherited(text: &str) -> Result<Vec<u8>, String> {
    use std::io::Read;
    use std::os::fd::FromRawFd;

    let fd: RawFd = text.parse().map_err(|_| format!("bad descriptor {text:?}"))?;
    if fd < 3 {
        return Err(format!("descriptor {fd} is a standard stream"));
    }
    // SAFETY: F_GETFD takes no pointer; it tells whether `fd` is open.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err(format!("descriptor {fd}: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the launcher opened `fd` for this process alone and nothing
    // here has touched it: it is owned from now on, and closed once read,
    // so the server never inherits it.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let mut data = Vec::new();
    file.read_to_end(&mut data).map_err(|err| format!("descriptor {fd}: {err}"))?;
    Ok(data)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::os::fd::AsRawFd;

    use super::*;

    #[test]
    fn a_sealed_file_reads_back_from_its_start_and_cannot_change() {
        let data = vec![b'x'; 1 << 20];
        let fd = sealed("test", &data).unwrap();
        assert!(fd.as_raw_fd() >= 3);
        // Close-on-exec until inherited.
        // SAFETY: F_GETFD takes no pointer.
        let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFD) };
        assert_ne!(flags & libc::FD_CLOEXEC, 0);
        let mut file = std::fs::File::from(fd.try_clone().unwrap());
        assert!(std::io::Write::write_all(&mut file, b"more").is_err(), "sealed files refuse writes");
        inherit(fd.as_raw_fd()).unwrap();
        // SAFETY: as above.
        let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFD) };
        assert_eq!(flags & libc::FD_CLOEXEC, 0);
        let raw = fd.as_raw_fd();
        std::mem::forget(fd);
        assert_eq!(read_inherited(&raw.to_string()).unwrap(), data);
        assert!(read_inherited("1").is_err() && read_inherited("x").is_err());
    }
}

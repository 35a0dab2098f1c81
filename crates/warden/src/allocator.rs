//! The process's heap: mimalloc, or the system's allocator (glibc's
//! malloc) when `WARDEN_ALLOCATOR=system`.
//!
//! A forwarded call allocates a handful of blocks, one of them the request's
//! future (kilobytes). glibc serves a block that size outside its per-thread
//! cache, consolidating its free lists first: about 7% of the instructions
//! of a stdio call went to `malloc` and `free` (`bench/instructions.sh`).
//! mimalloc serves every size from a per-thread page.
//!
//! The system allocator stays one variable away because tools that count
//! allocations by hooking `malloc` (heaptrack, in `bench/allocations.sh`)
//! see nothing of mimalloc's. The choice is made at the first allocation,
//! before any thread starts, and holds for the life of the process, so
//! every block is freed by the allocator that made it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::CStr;
use std::sync::atomic::{AtomicU8, Ordering};

use mimalloc::MiMalloc;

/// mimalloc, or the system allocator; see the module docs.
pub struct Allocator;

const UNDECIDED: u8 = 0;
const MIMALLOC: u8 = 1;
const SYSTEM: u8 = 2;

static CHOICE: AtomicU8 = AtomicU8::new(UNDECIDED);

/// Whether this process uses the system allocator.
#[inline]
fn system() -> bool {
    match CHOICE.load(Ordering::Relaxed) {
        MIMALLOC => false,
        SYSTEM => true,
        _ => decide(),
    }
}

/// Reads `WARDEN_ALLOCATOR` once. `getenv` does not allocate (`std::env`
/// would, from inside the allocator), and nothing sets the environment
/// this early.
#[cold]
fn decide() -> bool {
    // SAFETY: the name is a NUL-terminated string; the value, if any, is
    // one too, owned by the environment, and read before anything could
    // change it (the first allocation comes before `main`'s threads).
    let system = unsafe {
        let value = libc::getenv(c"WARDEN_ALLOCATOR".as_ptr());
        !value.is_null() && CStr::from_ptr(value) == c"system"
    };
    CHOICE.store(if system { SYSTEM } else { MIMALLOC }, Ordering::Relaxed);
    system
}

// SAFETY: every call goes to one of two allocators, the same one for the
// whole process (see `decide`), which upholds `GlobalAlloc`'s contract.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { if system() { System.alloc(layout) } else { MiMalloc.alloc(layout) } }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        unsafe { if system() { System.alloc_zeroed(layout) } else { MiMalloc.alloc_zeroed(layout) } }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from the same allocator, the process's one.
        unsafe { if system() { System.dealloc(ptr, layout) } else { MiMalloc.dealloc(ptr, layout) } }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`.
        unsafe {
            if system() { System.realloc(ptr, layout, new_size) } else { MiMalloc.realloc(ptr, layout, new_size) }
        }
    }
}

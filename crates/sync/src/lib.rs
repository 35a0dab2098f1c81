//! Locks that outlive a panic.
//!
//! A standard lock is poisoned when a thread panics while holding it, and
//! every later `lock()` returns an error. Warden's locks guard maps and
//! counters that each holder leaves consistent at every step (an insert, a
//! remove, a swap), so a panic elsewhere in the holder's task does not
//! leave them half-changed: these functions take the lock whatever, instead
//! of turning one panic into a failure of every later request.

#![warn(missing_docs)]

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks `mutex`, poisoned or not.
pub fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Locks `lock` for reading, poisoned or not.
pub fn read<T: ?Sized>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Locks `lock` for writing, poisoned or not.
pub fn write<T: ?Sized>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_poisoned_by_a_panic_is_still_taken() {
        let mutex = Mutex::new(1);
        let rw = RwLock::new(1);
        let _ = std::panic::catch_unwind(|| {
            let _held = mutex.lock();
            let _written = rw.write();
            panic!("while holding both");
        });
        assert!(mutex.is_poisoned() && rw.is_poisoned());
        *lock(&mutex) += 1;
        *write(&rw) += 1;
        assert_eq!((*lock(&mutex), *read(&rw)), (2, 2));
    }
}

//! A bot's heap limit, kept by the allocator its QuickJS runtime is given (not by QuickJS's own
//! `set_memory_limit`): the allocator refuses what would go over the limit and says so in a flag
//! the host reads. An `InternalError: out of memory` therefore counts as the bot's memory fault
//! only when an allocation was really refused; one the bot made and threw itself (any name, any
//! message) is what it is, a thrown error.
//!
//! The only `unsafe` of the worker crate: the `Allocator` trait QuickJS calls through is unsafe
//! to implement. Every call is passed on unchanged to rquickjs's own `RustAllocator`; this type
//! only counts and refuses.

use std::cell::Cell;
use std::rc::Rc;

use rquickjs::allocator::{Allocator, RustAllocator};

/// Bytes counted per allocation besides its usable size (the allocator's header).
const OVERHEAD: usize = 8;

/// Counts the bytes a runtime holds and refuses any allocation that would go over `limit`.
pub(crate) struct LimitedAllocator {
    used: usize,
    limit: usize,
    refused: Rc<Cell<bool>>,
}

impl LimitedAllocator {
    /// An allocator holding at most `limit` bytes; `refused` is set at its first refusal.
    pub fn new(limit: usize, refused: Rc<Cell<bool>>) -> LimitedAllocator {
        LimitedAllocator {
            used: 0,
            limit,
            refused,
        }
    }

    /// Whether `more` bytes (on top of what is held, less `freed`) stay within the limit.
    fn admit(&self, more: usize, freed: usize) -> bool {
        let after = self
            .used
            .saturating_sub(freed)
            .saturating_add(more)
            .saturating_add(OVERHEAD);
        if after > self.limit {
            self.refused.set(true);
            return false;
        }
        true
    }

    fn held(ptr: *mut u8) -> usize {
        if ptr.is_null() {
            return 0;
        }
        // SAFETY: every non-null pointer QuickJS hands back came from `RustAllocator` via this
        // allocator, which is what `usable_size` requires.
        unsafe { RustAllocator::usable_size(ptr) + OVERHEAD }
    }
}

// SAFETY: every pointer returned comes unchanged from `RustAllocator` (which upholds the trait's
// contract) or is null; pointers passed in are passed on to it unchanged.
unsafe impl Allocator for LimitedAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.admit(size, 0) {
            return std::ptr::null_mut();
        }
        let p = RustAllocator.alloc(size);
        self.used += Self::held(p);
        p
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        let Some(total) = count.checked_mul(size) else {
            return std::ptr::null_mut();
        };
        if !self.admit(total, 0) {
            return std::ptr::null_mut();
        }
        let p = RustAllocator.calloc(count, size);
        self.used += Self::held(p);
        p
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        if ptr.is_null() {
            return;
        }
        self.used = self.used.saturating_sub(Self::held(ptr));
        // SAFETY: the caller's contract (allocated by this allocator, i.e. by RustAllocator).
        unsafe { RustAllocator.dealloc(ptr) }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        if ptr.is_null() {
            return self.alloc(new_size);
        }
        if new_size == 0 {
            // SAFETY: as in `dealloc`.
            unsafe { self.dealloc(ptr) };
            return std::ptr::null_mut();
        }
        let old = Self::held(ptr);
        if !self.admit(new_size, old) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract, as in `dealloc`.
        let p = unsafe { RustAllocator.realloc(ptr, new_size) };
        if !p.is_null() {
            self.used = self.used.saturating_sub(old) + Self::held(p);
        }
        p
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: the caller's contract.
        unsafe { RustAllocator::usable_size(ptr) }
    }
}

//! Buffers the scheduling cycle reuses from one pod to the next (per thread), so the per-node
//! Filter and Score loops allocate nothing in the steady state. A buffer is taken empty with
//! [`take`] and handed back with [`give`]; its allocation is kept in a small pool of buffers with
//! the same element size (8 or 24 bytes: node references, indices, scores, `NodeScore`s). Reuse
//! across element types goes through an empty `Vec`'s in-place `collect`, so no `unsafe` is
//! needed; a buffer that cannot be reused is simply dropped.

use std::cell::RefCell;
use std::mem::{align_of, size_of};

/// Most buffers kept per element size.
const MAX_POOLED: usize = 16;

thread_local! {
    static POOL_8: RefCell<Vec<Vec<u64>>> = const { RefCell::new(Vec::new()) };
    static POOL_24: RefCell<Vec<Vec<[u64; 3]>>> = const { RefCell::new(Vec::new()) };
}

/// An empty `Vec<U>` that keeps `v`'s allocation when `T` and `U` have the same size and
/// alignment (the standard library collects an empty `vec::IntoIter` in place).
fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

/// An empty buffer, reusing a pooled allocation when one of the right element size is free.
pub(crate) fn take<T>() -> Vec<T> {
    if align_of::<T>() != align_of::<u64>() {
        return Vec::new();
    }
    match size_of::<T>() {
        8 => POOL_8
            .with(|p| p.borrow_mut().pop())
            .map(recycle)
            .unwrap_or_default(),
        24 => POOL_24
            .with(|p| p.borrow_mut().pop())
            .map(recycle)
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Hands a buffer back for reuse (its contents are dropped).
pub(crate) fn give<T>(v: Vec<T>) {
    if v.capacity() == 0 || align_of::<T>() != align_of::<u64>() {
        return;
    }
    match size_of::<T>() {
        8 => POOL_8.with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < MAX_POOLED {
                p.push(recycle(v));
            }
        }),
        24 => POOL_24.with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < MAX_POOLED {
                p.push(recycle(v));
            }
        }),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_back_empty_with_their_capacity() {
        let mut v: Vec<usize> = take();
        v.extend(0..1000);
        let cap = v.capacity();
        give(v);
        let refs: Vec<&str> = take();
        assert!(refs.is_empty());
        // A &str is 16 bytes: not from the 8-byte pool.
        assert_eq!(refs.capacity(), 0);
        let again: Vec<i64> = take();
        assert!(again.is_empty());
        assert_eq!(again.capacity(), cap);
    }
}

//! The process heap as glibc's allocator sees it: the bytes in use (what a
//! memory report or a bytes-per-character figure reads) and giving free
//! pages back to the system. Elsewhere both are no-ops (0, nothing).

/// Bytes the heap has handed out and not yet taken back (glibc's
/// `mallinfo2`: arena plus mmapped blocks); 0 where it cannot say.
pub fn in_use_bytes() -> u64 {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 only reads the allocator's statistics.
        let info = unsafe { libc::mallinfo2() };
        (info.uordblks + info.hblkhd) as u64
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    0
}

/// Returns free heap pages to the system (glibc's `malloc_trim`).
pub fn return_free_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only changes how the allocator holds free memory.
    unsafe {
        libc::malloc_trim(0);
    }
}

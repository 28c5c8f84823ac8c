//! The process heap as glibc's allocator sees it: the bytes in use (what a
//! memory report or a bytes-per-character figure reads), giving free
//! pages back to the system, and asking for huge pages under data that a
//! loop walks end to end every frame. Elsewhere all are no-ops (0, nothing).

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

/// Bytes of a transparent huge page (x86-64, and Arm with 4 KiB pages).
const HUGE_PAGE: usize = 2 << 20;

/// Asks the kernel to back the whole 2 MiB pages inside `start..end` with
/// transparent huge pages, now where it can (`MADV_HUGEPAGE`, then
/// `MADV_COLLAPSE`, Linux 6.1 on; elsewhere or on failure nothing changes
/// but speed). For data far larger than the TLB covers that a loop walks
/// every frame, a crowd's state: with 4 KiB pages each character's few
/// kilobytes cost a page walk or two per update, even when prefetched.
/// The contents stay as they are.
pub fn prefer_huge_pages(start: usize, end: usize) {
    let Some(first) = start.checked_next_multiple_of(HUGE_PAGE) else { return };
    let last = end / HUGE_PAGE * HUGE_PAGE;
    if last <= first {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: these advices change how pages are backed, never what they
    // hold; on a range with unmapped holes the call fails and changes
    // nothing but the mapped parts' backing.
    unsafe {
        let address = first as *mut libc::c_void;
        libc::madvise(address, last - first, libc::MADV_HUGEPAGE);
        #[cfg(target_env = "gnu")]
        libc::madvise(address, last - first, libc::MADV_COLLAPSE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_pages_keep_what_the_pages_hold() {
        // 9 MiB: at least four whole huge pages whatever the alignment.
        let data: Vec<u32> = (0..9 << 18).collect();
        let range = data.as_ptr_range();
        prefer_huge_pages(range.start as usize, range.end as usize);
        // Empty and reversed ranges: nothing.
        prefer_huge_pages(range.end as usize, range.start as usize);
        prefer_huge_pages(0, 0);
        prefer_huge_pages(usize::MAX - 1, usize::MAX);
        assert!(data.iter().enumerate().all(|(i, &v)| v == i as u32));
    }
}

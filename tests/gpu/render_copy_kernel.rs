//! The copy kernel's size search for bench's timestamp check
//! (`copy_kernel::bytes_taking`) on a real device (lavapipe without a GPU),
//! validation on. A GPU copies 16 MiB within its timestamps' own overhead,
//! so the check grows its copy until the host clock says it took long
//! enough; here the wanted time is set to minus an hour, and to an hour.

use crate::common::{assert_no_validation_messages, context};
use vkskin::render::copy_kernel::bytes_taking;

#[test]
fn the_timestamp_checks_copy_grows_fourfold_up_to_its_cap_until_it_takes_long_enough() {
    let Some(ctx) = context() else { return };
    let mib = 1u64 << 20;
    // Every copy takes longer than minus an hour: the first size. (Not
    // "at least no time": the time is the submission's minus empty ones',
    // which on a busy CPU device can come out below zero; CI saw it.)
    assert_eq!(bytes_taking(&ctx, mib, 48 * mib, -3.6e9).unwrap(), mib);
    // None takes an hour: 1, 4, 16 MiB, then the cap (48, not 64).
    assert_eq!(bytes_taking(&ctx, mib, 48 * mib, 3.6e9).unwrap(), 48 * mib);
    // A first size at the cap is not measured at all.
    assert_eq!(bytes_taking(&ctx, 48 * mib, 48 * mib, 3.6e9).unwrap(), 48 * mib);
    assert_no_validation_messages(&ctx);
}

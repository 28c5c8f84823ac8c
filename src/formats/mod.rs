//! The documents vkskin writes for people and programs to read: the `dump`
//! document (joint matrices and skinned vertices), the `simulate` trace and
//! the `inspect` report. The dump and trace formats are DESIGN.md's
//! contracts (external checks parse them). Built from the layers below;
//! the command line only parses options and writes these out.

pub mod dump;
pub mod inspect;
pub mod provenance;
pub mod trace;

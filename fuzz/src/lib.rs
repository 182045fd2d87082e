//! The fuzz targets' checks (see `checks.rs`, shared with the stable corpus replay test).

pub mod checks;

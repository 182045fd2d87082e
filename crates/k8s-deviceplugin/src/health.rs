//! XID health checks (upstream `NVIDIA/k8s-device-plugin` `internal/rm/health.go` `checkHealth`
//! and `getDisabledHealthCheckXids`): NVML reports a critical XID error on a GPU and the plugin
//! marks that device `Unhealthy` in its `ListAndWatch` stream, unless the XID is one of the
//! application errors it ignores by default (the GPU is still healthy): 13 (Graphics Engine
//! Exception), 31 (GPU memory page fault), 43 (GPU stopped processing), 45 (Preemptive cleanup,
//! due to previous errors), 68 (Video processor exception), 109 (Context Switch Timeout Error).
//! Upstream never marks a device healthy again (a restart of the plugin does).
//!
//! Not modelled: the `DP_DISABLE_HEALTHCHECKS` / `DP_ENABLE_HEALTHCHECKS` environment variables
//! that change the ignored set, ECC events (skipped upstream too, only XID critical errors count)
//! and MIG instance matching.

/// The application XIDs upstream ignores by default, with NVIDIA's names for them.
pub const APPLICATION_XIDS: [(u64, &str); 6] = [
    (13, "Graphics Engine Exception"),
    (31, "GPU memory page fault"),
    (43, "GPU stopped processing"),
    (45, "Preemptive cleanup, due to previous errors"),
    (68, "Video processor exception"),
    (109, "Context Switch Timeout Error"),
];

/// What the plugin does with an XID critical error event on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XidVerdict {
    /// An application error: the event is skipped, the device stays as it was.
    Skipped(&'static str),
    /// The device is marked `Unhealthy`.
    Unhealthy,
}

/// The plugin's decision for `xid` (upstream `disabledXIDs.IsDisabled` over the default set).
pub fn xid_verdict(xid: u64) -> XidVerdict {
    match APPLICATION_XIDS.iter().find(|(x, _)| *x == xid) {
        Some((_, name)) => XidVerdict::Skipped(name),
        None => XidVerdict::Unhealthy,
    }
}

/// The plugin's log line for the event on `device` (upstream logs with klog; for an ignored XID it
/// prints the raw event, here its number and name).
pub fn xid_log(xid: u64, device: &str) -> String {
    match xid_verdict(xid) {
        XidVerdict::Unhealthy => {
            format!("XidCriticalError: Xid={xid} on Device={device}; marking device as unhealthy.")
        }
        XidVerdict::Skipped(name) => format!(
            "Skipping event Xid={xid} ({name}) on Device={device}: an application error, the device stays healthy."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn application_xids_are_skipped_and_the_rest_mark_the_device_unhealthy() {
        for x in [13, 31, 43, 45, 68, 109] {
            assert!(matches!(xid_verdict(x), XidVerdict::Skipped(_)), "{x}");
        }
        // 48 (double-bit ECC), 79 (fallen off the bus), 94/95 (contained/uncontained ECC).
        for x in [48, 79, 94, 95, 0, 12, 14] {
            assert_eq!(xid_verdict(x), XidVerdict::Unhealthy, "{x}");
        }
        assert_eq!(
            xid_log(79, "0"),
            "XidCriticalError: Xid=79 on Device=0; marking device as unhealthy."
        );
        assert_eq!(
            xid_verdict(31),
            XidVerdict::Skipped("GPU memory page fault")
        );
    }
}

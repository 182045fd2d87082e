//! [`ExtensionPoint`]: the scheduling framework's extension points, with upstream's config field
//! (`KubeSchedulerConfiguration` `profiles[].plugins.<field>`) and interface names
//! (`staging/src/k8s.io/kube-scheduler/framework/interface.go`).

use crate::interface::Plugin;

/// The extension points of a profile, with upstream's config field and interface names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExtensionPoint {
    /// PreEnqueue.
    PreEnqueue,
    /// QueueSort.
    QueueSort,
    /// PreFilter.
    PreFilter,
    /// Filter.
    Filter,
    /// PostFilter.
    PostFilter,
    /// PreScore.
    PreScore,
    /// Score.
    Score,
    /// Reserve.
    Reserve,
    /// Permit.
    Permit,
    /// PreBind.
    PreBind,
    /// Bind.
    Bind,
    /// PostBind.
    PostBind,
}

impl ExtensionPoint {
    /// Every extension point, in upstream order.
    pub const ALL: [ExtensionPoint; 12] = [
        ExtensionPoint::PreEnqueue,
        ExtensionPoint::QueueSort,
        ExtensionPoint::PreFilter,
        ExtensionPoint::Filter,
        ExtensionPoint::PostFilter,
        ExtensionPoint::PreScore,
        ExtensionPoint::Score,
        ExtensionPoint::Reserve,
        ExtensionPoint::Permit,
        ExtensionPoint::PreBind,
        ExtensionPoint::Bind,
        ExtensionPoint::PostBind,
    ];

    /// The config field, e.g. `preFilter`.
    pub fn field(self) -> &'static str {
        match self {
            ExtensionPoint::PreEnqueue => "preEnqueue",
            ExtensionPoint::QueueSort => "queueSort",
            ExtensionPoint::PreFilter => "preFilter",
            ExtensionPoint::Filter => "filter",
            ExtensionPoint::PostFilter => "postFilter",
            ExtensionPoint::PreScore => "preScore",
            ExtensionPoint::Score => "score",
            ExtensionPoint::Reserve => "reserve",
            ExtensionPoint::Permit => "permit",
            ExtensionPoint::PreBind => "preBind",
            ExtensionPoint::Bind => "bind",
            ExtensionPoint::PostBind => "postBind",
        }
    }

    /// The upstream interface name used in errors, e.g. `PreFilterPlugin`.
    pub fn interface(self) -> &'static str {
        match self {
            ExtensionPoint::PreEnqueue => "PreEnqueuePlugin",
            ExtensionPoint::QueueSort => "QueueSortPlugin",
            ExtensionPoint::PreFilter => "PreFilterPlugin",
            ExtensionPoint::Filter => "FilterPlugin",
            ExtensionPoint::PostFilter => "PostFilterPlugin",
            ExtensionPoint::PreScore => "PreScorePlugin",
            ExtensionPoint::Score => "ScorePlugin",
            ExtensionPoint::Reserve => "ReservePlugin",
            ExtensionPoint::Permit => "PermitPlugin",
            ExtensionPoint::PreBind => "PreBindPlugin",
            ExtensionPoint::Bind => "BindPlugin",
            ExtensionPoint::PostBind => "PostBindPlugin",
        }
    }

    /// True when `plugin` implements this extension point.
    pub fn implemented_by(self, plugin: &dyn Plugin) -> bool {
        match self {
            ExtensionPoint::PreEnqueue => plugin.as_pre_enqueue().is_some(),
            ExtensionPoint::QueueSort => plugin.as_queue_sort().is_some(),
            ExtensionPoint::PreFilter => plugin.as_pre_filter().is_some(),
            ExtensionPoint::Filter => plugin.as_filter().is_some(),
            ExtensionPoint::PostFilter => plugin.as_post_filter().is_some(),
            ExtensionPoint::PreScore => plugin.as_pre_score().is_some(),
            ExtensionPoint::Score => plugin.as_score().is_some(),
            ExtensionPoint::Reserve => plugin.as_reserve().is_some(),
            ExtensionPoint::Permit => plugin.as_permit().is_some(),
            ExtensionPoint::Bind => plugin.as_bind().is_some(),
            ExtensionPoint::PreBind => plugin.as_pre_bind().is_some(),
            ExtensionPoint::PostBind => plugin.as_post_bind().is_some(),
        }
    }
}

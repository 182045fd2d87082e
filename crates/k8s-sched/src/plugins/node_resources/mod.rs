//! The NodeResources plugins and their scoring strategies, one file per file of upstream
//! `pkg/scheduler/framework/plugins/noderesources/`:
//!
//! | file | upstream | what |
//! |---|---|---|
//! | `fit.rs` | `fit.go` | NodeResourcesFit: the pod's requests fit the node; Score with the configured strategy |
//! | `balanced_allocation.rs` | `balanced_allocation.go` | NodeResourcesBalancedAllocation and `balancedResourceScorer` |
//! | `least_allocated.rs` | `least_allocated.go` | LeastAllocated: `leastRequestedScore`, `leastResourceScorer` |
//! | `most_allocated.rs` | `most_allocated.go` | MostAllocated: `mostRequestedScore`, `mostResourceScorer` |
//! | `requested_to_capacity_ratio.rs` | `requested_to_capacity_ratio.go` | RequestedToCapacityRatio: the shape, `scaledUtilization` |
//! | `resource_allocation.rs` | `resource_allocation.go` | the scorer both plugins share: per-resource (allocatable, requested), then the strategy |
//!
//! Each strategy's formula exists once: the per-plugin Score path and the fused node pass
//! (`runtime/fused.rs`, which scores the default cpu/memory case from the cache's per-node
//! arrays) call the same functions.

pub mod balanced_allocation;
pub mod fit;
pub mod least_allocated;
pub mod most_allocated;
pub mod requested_to_capacity_ratio;
pub mod resource_allocation;

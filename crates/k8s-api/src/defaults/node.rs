//! Node defaults (upstream `pkg/apis/core/v1/defaults.go` `SetDefaults_NodeStatus`): a node that
//! reports capacity but no allocatable gets allocatable = capacity.

use k8s_types::core::Node;

/// Upstream `SetDefaults_NodeStatus`.
pub fn set_defaults_node(node: &mut Node) {
    if node.status.allocatable.is_empty() && !node.status.capacity.is_empty() {
        node.status.allocatable = node.status.capacity.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_types::Quantity;

    #[test]
    fn allocatable_defaults_to_capacity() {
        let mut n = Node::default();
        n.status
            .capacity
            .insert("cpu".into(), Quantity::parse("8").unwrap());
        set_defaults_node(&mut n);
        assert_eq!(n.status.allocatable["cpu"].to_string(), "8");
    }
}

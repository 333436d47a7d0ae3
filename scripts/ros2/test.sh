#!/usr/bin/env bash
# npm run test:ros2: the suites of tests/ros2/ (node:test) and tests/ros/stack.test.ts against a real ROS 2 graph: the core that
# `npm run ros2:build` built, rclnodejs built against it, the test stack of tests/ros/stack (real ROS 2
# nodes: the real ros2_control controller of the overlay, with mock hardware) and armgate on `backend: ros2`. Nothing is skipped: without the core or rclnodejs it fails,
# saying what to run. Extra arguments pass to node's test runner (e.g. --test-name-pattern).
# The graph stays on this machine (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST) and each suite takes its
# own ROS_DOMAIN_ID from ARMGATE_ROS2_DOMAIN_BASE (default 140) upwards, so runs do not see each other's nodes.
set -euo pipefail
armgate_ros2_dir=$(CDPATH= cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(CDPATH= cd -- "$armgate_ros2_dir/../.." && pwd)
cd "$root"
fail() { printf 'test:ros2: %s\n' "$*" >&2; exit 1; }
# shellcheck source=env.sh
. "$armgate_ros2_dir/env.sh" 2>/dev/null || fail "the ROS 2 core is not built (no $ARMGATE_ROS2_PREFIX/.armgate-built); run: npm run ros2:build"
[ "$ARMGATE_ROS2_OVERLAY" = 1 ] ||
  fail "the ros2_control overlay is not built (no $ARMGATE_ROS2_OVERLAY_PREFIX/.armgate-built); run: npm run ros2:build"
node -e "require('rclnodejs')" >/dev/null 2>&1 ||
  fail "rclnodejs does not load against the core ($ARMGATE_ROS2_PREFIX); run: npm run ros2:build"
[ -f node_modules/rclnodejs/generated/controller_manager_msgs/controller_manager_msgs__srv__SwitchController.js ] ||
  fail "rclnodejs has no controller_manager_msgs (its messages were generated without the overlay); run: npm run ros2:build"
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export ARMGATE_ROS2_DOMAIN_BASE=${ARMGATE_ROS2_DOMAIN_BASE:-140}
export ARMGATE_TEST_ROS2=1
export ARMGATE_STACK_TEST_DOMAIN=${ARMGATE_STACK_TEST_DOMAIN:-$((ARMGATE_ROS2_DOMAIN_BASE + 10))}
# tests/ros2's suites, and the test stack's own checks with a plain rclnodejs client (tests/ros/stack.test.ts).
mapfile -t files < <(find tests/ros2 -name '*.test.ts' | sort)
[ "${#files[@]}" -gt 0 ] || fail "no suites in tests/ros2"
files+=(tests/ros/stack.test.ts)
echo "test:ros2: ${#files[@]} suites on ROS 2 $ROS_DISTRO ($RMW_IMPLEMENTATION, core $ARMGATE_ROS2_KEY)"
exec node --import tsx --test --test-concurrency=2 --test-timeout=300000 "$@" "${files[@]}"

#!/usr/bin/env bash
# Builds rclnodejs (the version locked in package-lock.json) in this repository's node_modules against
# the ROS 2 core that build.sh built, and generates its JavaScript messages for every package of the
# core (sensor_msgs, trajectory_msgs, control_msgs, moveit_msgs, iiwa_msgs, ...) and of the ros2_control
# overlay when it is built (controller_manager_msgs, the test stack's). Called by
# `npm run ros2:build`; a second run with the same core and version is a no-op that says so.
# What rclnodejs's build needs, and why:
#   ROS_DISTRO        normally set by ros_environment (not built here): env.sh sets it
#   a `ros2` on PATH   its build finds the ROS prefix by `which ros2`: build.sh installs a stub
#   npm_config_yes    its build runs `npx rimraf`, which would otherwise ask to install
#   allowScripts      npm 11 runs a dependency's install script only when package.json allows it (rclnodejs: true)
# Nothing is downloaded besides the package itself: node-gyp uses Node's headers on the machine.
set -euo pipefail
armgate_ros2_dir=$(CDPATH= cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(CDPATH= cd -- "$armgate_ros2_dir/../.." && pwd)
# shellcheck source=env.sh
. "$armgate_ros2_dir/env.sh"
cd "$root"
say() { printf 'ros2:build: %s\n' "$*"; }

version=$(node -p "require('./package-lock.json').packages['node_modules/rclnodejs'].version")
stamp="node_modules/rclnodejs/.armgate-built"
core_want="rclnodejs $version against $ARMGATE_ROS2_PREFIX"
want=$core_want
probe=node_modules/rclnodejs/generated/iiwa_msgs/iiwa_msgs__action__MoveToJoints.js
if [ "$ARMGATE_ROS2_OVERLAY" = 1 ]; then
  want="$want and $ARMGATE_ROS2_OVERLAY_PREFIX"
  probe=node_modules/rclnodejs/generated/controller_manager_msgs/controller_manager_msgs__srv__SwitchController.js
fi
if [ -f "$stamp" ] && [ "$(head -n1 "$stamp")" = "$want" ] && [ -f "$probe" ]; then
  say "rclnodejs is built: $want"
  exit 0
fi
started=$SECONDS
# rclnodejs starts one `python3 parser.py` per interface file (850 files generated here), all at once, with no
# knob to bound them, and takes the `python3` that leads PATH. Through pyenv's shim (bash, then pyenv's own
# scripts) each parser cost about 280 ms instead of 50 ms and they piled up: 77 at once. Debian's Python (the
# one the core was built with) comes first on PATH for the install (its postinstall generates them too) and
# this step only, by a folder holding a link to it.
# Measured on 2 cores (2026-11-28, the same 850 files into a copy of the package, identical output):
#   pyenv shim (before)   117 and 259 s, 76 and 94 s of CPU, 77-79 parsers at once, load average to 62 and 91
#   /usr/bin/python3      14, 21, 28 and 46 s (beside others' tests), 15-16 s of CPU, at most 16 parsers at once
#   the same, bounded to 2 at once by a flock wrapper: 36 and 44 s, 20-21 s of CPU (bash and flock per
#                         file), 310 wrappers asleep: no faster, so not kept
gen_python=$(mktemp -d)
trap 'rm -rf "$gen_python"' EXIT
if [ -x /usr/bin/python3 ]; then ln -s /usr/bin/python3 "$gen_python/python3"; fi
# The addon built against this core already (only the overlay is new): the messages only.
if [ -f "$stamp" ] && case "$(head -n1 "$stamp")" in "$core_want"*) true ;; *) false ;; esac &&
  node -e "require('rclnodejs')" >/dev/null 2>&1; then
  say "rclnodejs's addon is built against this core; generating the messages again for $want"
else
  say "building $want (node-gyp; about 70 s on 2 cores)"
  lock_before=$(sha256sum package-lock.json)
  PATH="$gen_python:$PATH" npm_config_yes=true npm install --no-save --no-audit --no-fund "rclnodejs@$version"
  if [ "$(sha256sum package-lock.json)" != "$lock_before" ]; then
    say "npm changed package-lock.json while installing rclnodejs; restore it with git checkout package-lock.json" >&2
    exit 1
  fi
fi
say "generating rclnodejs's JavaScript messages for the packages on AMENT_PREFIX_PATH (the core's and the overlay's)"
gen_log="$gen_python/generate.log"
gen_started=$SECONDS
(cd node_modules/rclnodejs && PATH="$gen_python:$PATH" node scripts/generate_messages.cjs) 2>&1 | tee "$gen_log"
# Its generate_messages.cjs prints "Caught error" and exits 0 when a parser fails: the messages would be
# left incomplete (the ROS 2 suites load them), so that is a failure here, and no stamp is written.
if grep -q '^Caught error' "$gen_log" || ! grep -q '^Generation complete' "$gen_log"; then
  say "rclnodejs's message generation failed (above); run npm run ros2:build again" >&2
  exit 1
fi
say "messages generated in $((SECONDS - gen_started)) s ($(find node_modules/rclnodejs/generated -name '*.js' | wc -l) files)"
node -e "require('rclnodejs')" # the addon loads against this core
printf '%s\nbuilt %s in %d s\n' "$want" "$(date -u +%FT%TZ)" "$((SECONDS - started))" >"$stamp"
say "rclnodejs is built: $want ($((SECONDS - started)) s)"

#!/usr/bin/env bash
# npm run ros2:build: builds the minimal ROS 2 Jazzy core from ../shared/ros2-jazzy with Debian's colcon
# (Release, tests off, only the packages in packages.txt and what they need) into a cache folder keyed
# by the sources' manifest and that list; a second run finds it and only says where it is. Then builds
# rclnodejs's native addon against it and generates rclnodejs's JavaScript messages (scripts/ros2/rclnodejs.sh).
#
# Left out on purpose: Fast DDS (not in Debian 12; Cyclone DDS from Debian is the one middleware),
# ros2cli (rclnodejs needs only a `ros2` on PATH to find the prefix: a stub stands in), tracing (no LTTng).
# Debian packages it needs: DEBIAN_PACKAGES below; as root it installs the missing ones with apt-get.
#   --force   build again even when the cache holds this key
#   --core    build the core only (not rclnodejs)
set -euo pipefail
armgate_ros2_dir=$(CDPATH= cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=paths.sh
. "$armgate_ros2_dir/paths.sh"

force=0
core_only=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --core) core_only=1 ;;
    *) echo "ros2:build: unknown argument $arg" >&2; exit 2 ;;
  esac
done

DEBIAN_PACKAGES=(colcon python3-colcon-ros python3-colcon-cmake python3-colcon-library-path
  python3-colcon-package-selection python3-colcon-parallel-executor python3-colcon-recursive-crawl
  python3-colcon-python-setup-py python3-colcon-output python3-colcon-defaults
  python3-colcon-package-information python3-colcon-pkg-config python3-colcon-metadata python3-colcon-bash
  cmake g++ python3-dev python3-setuptools python3-empy python3-lark python3-catkin-pkg python3-numpy
  libyaml-dev libacl1-dev libspdlog-dev libtinyxml2-dev cyclonedds-dev libssl-dev)

say() { printf 'ros2:build: %s\n' "$*"; }

if [ -z "$ARMGATE_ROS2_KEY" ]; then
  say "no sources at $ARMGATE_ROS2_SOURCES (MANIFEST.tsv missing); set ARMGATE_ROS2_SOURCES" >&2
  exit 1
fi

stamp="$ARMGATE_ROS2_PREFIX/.armgate-built"
if [ "$force" = 0 ] && [ -f "$stamp" ]; then
  say "the core is built: $ARMGATE_ROS2_PREFIX (key $ARMGATE_ROS2_KEY; $(cat "$stamp"))"
else
  missing=()
  for p in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
      say "missing Debian packages (install them as root): ${missing[*]}" >&2
      exit 1
    fi
    say "installing ${#missing[@]} Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi

  mapfile -t packages < <(grep -v '^#' "$armgate_ros2_dir/packages.txt" | grep -v '^$')
  work="$ARMGATE_ROS2_CACHE/$ARMGATE_ROS2_KEY"
  # A build that failed or was cut off resumes where it stopped (same key: same sources, same packages);
  # --force starts afresh.
  [ "$force" = 1 ] && rm -rf "$work/build" "$ARMGATE_ROS2_PREFIX"
  rm -rf "$work/ws"
  mkdir -p "$work/ws/src"
  say "unpacking $(ls "$ARMGATE_ROS2_SOURCES"/src/*.tar.gz | wc -l) source archives into $work/ws/src"
  for f in "$ARMGATE_ROS2_SOURCES"/src/*.tar.gz; do tar -xzf "$f" -C "$work/ws/src"; done
  say "building ${#packages[@]} packages and what they need (colcon, Release, tests off) into $ARMGATE_ROS2_PREFIX"
  started=$SECONDS
  # Debian's Python first (a pyenv Python lacks catkin_pkg, empy 3 and lark); no LTTng, so tracing off;
  # test_msgs is a test-only dependency that --packages-up-to pulls in (ignored: skipping it would still
  # make colcon look for its install).
  (
    cd "$work/ws"
    PATH=/usr/bin:/bin:/usr/sbin:/sbin colcon --log-base "$work/log" build --merge-install \
      --build-base "$work/build" --install-base "$ARMGATE_ROS2_PREFIX" \
      --executor parallel --parallel-workers "$(nproc)" --event-handlers console_direct- console_stderr- \
      --cmake-args -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=/usr/bin/python3 \
        -DTRACETOOLS_DISABLED=ON \
      --packages-up-to "${packages[@]}" --packages-ignore test_msgs
  ) || { say "colcon build failed; its logs: $work/log/latest_build" >&2; exit 1; }
  # rclnodejs's build finds the ROS prefix by `which ros2`; the CLI is not built here.
  printf '#!/bin/sh\necho "ros2cli is not part of this core (armgate builds only what it needs)" >&2\nexit 1\n' \
    >"$ARMGATE_ROS2_PREFIX/bin/ros2"
  chmod +x "$ARMGATE_ROS2_PREFIX/bin/ros2"
  rm -rf "$work/ws" "$work/build" "$work/log"
  took=$((SECONDS - started))
  size=$(du -sm "$ARMGATE_ROS2_PREFIX" | cut -f1)
  echo "built $(date -u +%FT%TZ) in ${took} s, ${size} MB installed" >"$stamp"
  say "the core is built: $ARMGATE_ROS2_PREFIX ($(cat "$stamp"))"
fi

[ "$core_only" = 1 ] && exit 0
exec bash "$armgate_ros2_dir/rclnodejs.sh"

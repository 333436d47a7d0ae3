/** The jog engine's tuning (lib/motion/jog.ts): singularity thresholds, acceleration shares, gains and tolerances. */

/** Smallest singular value of the Jacobian below which a Cartesian jog toward a singularity slows down. */
export const SINGULAR_SLOW = 0.06;
/** Smallest singular value a Cartesian jog never goes below (it stops before). */
export const SINGULAR_STOP = 0.02;
/** Largest damping (squared) of the least squares near a singularity. */
export const DAMPING2_MAX = 0.002;
/** Share of each joint's acceleration limit a joint jog ramps and brakes with (the drive takes the exact command). */
export const JOINT_ACC_SHARE = 0.9;
/** Share of the acceleration limits the Cartesian speed ramps with; the rest is for the Jacobian's change. */
export const CARTESIAN_ACC_SHARE = 0.8;
/** Share of each joint's velocity limit a Cartesian jog may ask of it. */
export const CARTESIAN_VEL_SHARE = 0.5;
/** Gain (1/s) pulling the TCP back to its reference pose (line and orientation). */
export const POSE_GAIN = 20;
/** The TCP speed (m/s) the pull back onto the reference may always use (a step's last fraction of a millimetre). */
export const PULL_SPEED_MS = 0.01;
/** The TCP's turn rate (rad/s) the pull back onto the reference orientation may always use. */
export const PULL_RATE_RAD_S = 0.04;
/** Distance (rad) a Cartesian jog keeps from the joint limits where it stops. */
export const JOINT_MARGIN_RAD = 0.01;
/** A step goal is reached within this (rad or m), with the pose error below it too. */
export const GOAL_TOLERANCE = 2e-5;
/** The collision model is asked every this many periods (a check costs ~0.2 ms), about the stop point that much later. */
export const COLLISION_EVERY = 5;
/** Joint speed (rad/s) counted as at rest at the end of a jog. */
export const REST_SPEED = 1e-4;

/**
 * Plans made by dry runs, kept until they expire (`safety.plan_ttl_s`) so that one can be executed
 * once: exactly the trajectory planned, only while the arm is still where the plan starts.
 */
import { randomBytes } from 'node:crypto';
import type { JointTrajectoryMsg } from '../ros/messages.ts';

/** What a dry run answers about its plan (the `plan` field). */
export interface PlanView {
  readonly id: string;
  readonly planner: string;
  readonly duration_s: number;
  readonly start_joints: number[];
  readonly final_joints: number[];
  /** Downsampled for display: times (s), joint angles (rad) and TCP positions (m). */
  readonly path: { readonly t_s: number[]; readonly joints: number[][]; readonly tcp: number[][] };
  /** Smallest clearance to the safety envelope along the plan (m); null without an envelope. */
  readonly min_clearance_m: number | null;
  /** ISO 8601 time after which the plan cannot be executed. */
  readonly expires_at: string;
}

/** A plan as kept: its view, the exact trajectory and its life. */
export interface StoredPlan {
  readonly view: PlanView;
  readonly trajectory: JointTrajectoryMsg;
  /** What the plan does, for the arbiter's busy messages and the log. */
  readonly what: string;
  readonly expiresAtMs: number;
  /** Set when it was executed (ISO time): a plan runs once. */
  executedAt?: string;
}

/** How a plan id resolves. */
export type PlanLookup =
  | { readonly kind: 'ready'; readonly plan: StoredPlan }
  | { readonly kind: 'unknown' }
  | { readonly kind: 'expired'; readonly plan: StoredPlan }
  | { readonly kind: 'executed'; readonly plan: StoredPlan };

/** Most plans kept; beyond it the oldest go first. */
export const MAX_PLANS = 256;

/** A fresh plan id (128 random bits, URL-safe). */
export function newPlanId(): string {
  return randomBytes(16).toString('base64url');
}

/** The plans of one app (lib/app/services.ts), by id. */
export class PlanStore {
  private readonly plans = new Map<string, StoredPlan>();

  /** Keeps a plan (dropping plans expired long ago, and the oldest beyond {@link MAX_PLANS}). */
  keep(plan: StoredPlan, nowMs: number): void {
    const plans = this.plans;
    for (const [id, old] of plans) if (old.expiresAtMs < nowMs - 10 * 60_000) plans.delete(id);
    plans.set(plan.view.id, plan);
    while (plans.size > MAX_PLANS) {
      const oldest = plans.keys().next().value;
      if (oldest === undefined) break;
      plans.delete(oldest);
    }
  }

  /** The plan of an id, and whether it may still run. */
  lookup(id: string, nowMs: number): PlanLookup {
    const plan = this.plans.get(id);
    if (!plan) return { kind: 'unknown' };
    if (plan.executedAt !== undefined) return { kind: 'executed', plan };
    if (nowMs > plan.expiresAtMs) return { kind: 'expired', plan };
    return { kind: 'ready', plan };
  }

  /** Forgets every plan (app close). */
  clear(): void {
    this.plans.clear();
  }
}

/**
 * npm run bench: armgate's figures beside their comparisons, measured in this run. Medians
 * throughout (the machines are noisy); targets in the last column.
 */
import { cpus } from 'node:os';
import { moveOverhead, mcpRoundTrip, stopLatency } from './api.ts';
import { fkTimes } from './fk.ts';
import { jointStatesLoad } from './http.ts';
import { ikBench } from './ik.ts';
import { linDeviation, plannerBench, ptpOverOptimal } from './planning.ts';
import { printTable } from './table.ts';
import { testConfig } from '../tests/support/server.ts';

const cpu = cpus()[0]?.model ?? 'unknown cpu';
process.stdout.write(`armgate bench: ${cpu}, ${cpus().length} cores, node ${process.version}; figures are medians\n`);

const http = await jointStatesLoad();
printTable('GET /robot/joint_states, 32 connections (autocannon, which reports whole milliseconds), median of 3 rounds', ['server', 'req/s', 'p50 ms', 'p99 ms', 'target'], [
  ['armgate', http.armgate.requestsPerS, http.armgate.p50Ms, http.armgate.p99Ms, `p50 < 1 ms; >= 50 % of ceiling: ${((100 * http.armgate.requestsPerS) / http.bare.requestsPerS).toFixed(0)} %`],
  ['bare node:http, same bytes (ceiling)', http.bare.requestsPerS, http.bare.p50Ms, http.bare.p99Ms, ''],
]);

const fk = await fkTimes();
printTable('Forward kinematics per call', ['implementation', 'us/call', 'target'], [
  ['MuJoCo (FK service, GET /robot/pose)', fk.mujocoUs, '< 5 us'],
  ['pure TypeScript chain (planning)', fk.chainUs, ''],
]);

const ik = await ikBench();
printTable('IK, TRAC-IK protocol: 10,000 random in-limit targets, seed at mid-limits, 5 ms budget, success = 1e-5 and in limits', ['solver', 'success %', 'median us', 'p95 us', 'target'], ik.rows.map((r, i) => [r.solver, r.success * 100, r.medianUs, r.p95Us, i === 0 ? '>= 99.9 %, median < 100 us' : '']));
if (ik.note) process.stdout.write(`${ik.note}\n`);

const planners = await plannerBench();
printTable('Planning time per planner, 100 fixed targets from work, one box in the scene (plan only)', ['planner', 'success %', 'median ms', 'p95 ms'], planners.map((r) => [r.planner, r.success * 100, r.medianMs, r.p95Ms]));

const { limits } = await testConfig();
const lin = await linDeviation(limits);
const ptp = ptpOverOptimal(limits);
printTable('Path quality', ['measure', 'value', 'target'], [
  [`LIN: max TCP distance from the line (${lin.plans} plans, 1 ms samples)`, `${(lin.maxDeviationM * 1000).toExponential(2)} mm`, '<= 0.1 mm'],
  ['PTP: duration / max_i(T_i) over 1000 moves, median', ptp.median, '<= 1.02'],
  ['PTP: duration / max_i(T_i), worst', ptp.max, ''],
]);

const overhead = await moveOverhead();
const stop = await stopLatency();
const mcp = await mcpRoundTrip();
printTable('API', ['measure', 'p50 ms', 'other', 'target'], [
  ['move/joints response minus trajectory duration', overhead.p50Ms, `p95 ${overhead.p95Ms.toFixed(2)}`, '< 20 ms'],
  ['POST /stop during a move', stop.movingP50Ms, `idle ${stop.idleP50Ms.toFixed(2)}`, '< 50 ms'],
  ['MCP get_joint_states round trip (SDK client)', mcp.mcp.p50Ms, `p99 ${mcp.mcp.p99Ms.toFixed(2)}`, '< 1.5 ms'],
  ['REST twin GET /robot/joint_states (fetch)', mcp.rest.p50Ms, `p99 ${mcp.rest.p99Ms.toFixed(2)}`, ''],
]);
process.exit(0);

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.ts';

const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];
const HEADER = 't,joint1,joint2,joint3,joint4,joint5,joint6,joint7';

async function positions(url: string): Promise<number[]> {
  return ((await (await fetch(`${url}/robot/joint_states`)).json()) as { position: number[] }).position;
}

function csvForm(text: string | Uint8Array<ArrayBuffer>, name = 'points.csv', part = 'file'): FormData {
  const form = new FormData();
  form.set(part, new Blob([text]), name);
  return form;
}

async function detail(res: Response): Promise<{ loc: (string | number)[]; msg: string }[]> {
  const body = (await res.json()) as { detail: { loc: (string | number)[]; msg: string }[] };
  return body.detail;
}

describe('trajectories on the simulated arm', () => {
  let server: TestServer;
  let url: string;
  before(async () => {
    server = await startTestServer({ sim: { time_scale: 10 } });
    url = server.url;
  });
  after(async () => {
    await server.close();
  });

  it('publishes a JSON trajectory that the controller then follows to its last point', async () => {
    const target = [0.3, 0, 0, -1.57, 0, 1.57, 0];
    const res = await fetch(`${url}/trajectory/send`, { method: 'POST', body: JSON.stringify({ points: [{ positions: target, time_from_start: 1.0 }] }) });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'sent', points: 1, times_increasing: true });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const q = await positions(url);
    assert.ok(Math.abs((q[0] ?? 0) - 0.3) < 1e-6, `joint1 at ${q[0]}`);
    const logs = ((await (await fetch(`${url}/trajectory/logs?n=10`)).json()) as { lines: string[] }).lines;
    assert.ok(logs.some((l) => /publishing 1 points/.test(l)));
    assert.ok(logs.some((l) => /accepted trajectory/.test(l)));
    assert.ok(logs.some((l) => /finished/.test(l)));
    for (const line of logs) assert.match(line, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /);
  });

  it('says when times do not increase, and the controller refuses that trajectory without moving', async () => {
    const before = await positions(url);
    const res = await fetch(`${url}/trajectory/send`, {
      method: 'POST',
      body: JSON.stringify({ points: [{ positions: WORK, time_from_start: 1 }, { positions: WORK, time_from_start: 1 }] }),
    });
    const body = (await res.json()) as { times_increasing: boolean; warning: string };
    assert.equal(body.times_increasing, false);
    assert.match(body.warning, /point 1/);
    assert.deepEqual(await positions(url), before);
    const logs = ((await (await fetch(`${url}/trajectory/logs?n=3`)).json()) as { lines: string[] }).lines;
    assert.ok(logs.some((l) => /refused/.test(l)));
  });

  it('lets the controller refuse a trajectory faster than the velocity limits: the arm does not move', async () => {
    const before = await positions(url);
    const res = await fetch(`${url}/trajectory/send`, { method: 'POST', body: JSON.stringify({ points: [{ positions: [2.5, 0, 0, -1.57, 0, 1.57, 0], time_from_start: 0.1 }] }) });
    assert.equal(res.status, 200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(await positions(url), before);
    const logs = ((await (await fetch(`${url}/trajectory/logs?n=3`)).json()) as { lines: string[] }).lines;
    assert.ok(logs.some((l) => /refused.*rad\/s/.test(l)), logs.join('\n'));
  });

  const invalid: [string, unknown, (string | number)[]][] = [
    ['empty points', { points: [] }, ['body', 'points']],
    ['6 positions', { points: [{ positions: [0, 0, 0, 0, 0, 0], time_from_start: 1 }] }, ['body', 'points', 0, 'positions']],
    ['a non-finite position', '{"points": [{"positions": [0, 0, 0, -1.57, 0, 1.57, 1e999], "time_from_start": 1}]}', ['body', 'points', 0, 'positions', 6]],
    ['a negative time', { points: [{ positions: WORK, time_from_start: -1 }] }, ['body', 'points', 0, 'time_from_start']],
    ['a position beyond its limit', { points: [{ positions: WORK, time_from_start: 1 }, { positions: [0, 0, 0, -2.5, 0, 1.57, 0], time_from_start: 2 }] }, ['body', 'points', 1, 'positions', 3]],
    ['an unknown field', { points: [{ positions: WORK, time_from_start: 1 }], speed: 1 }, ['body', 'speed']],
  ];
  for (const [name, body, loc] of invalid) {
    it(`rejects ${name} with 422 at ${loc.join('.')} and does not move`, async () => {
      const before = await positions(url);
      const res = await fetch(`${url}/trajectory/send`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });
      assert.equal(res.status, 422);
      const issues = await detail(res);
      assert.deepEqual(issues[0]?.loc, loc);
      if (name.includes('limit')) assert.match(issues[0]?.msg ?? '', /point 1: joint4 = -2.5 rad is outside its limits \[-2.09, 2.09\]/);
      assert.deepEqual(await positions(url), before);
    });
  }

  it('accepts positions beyond the limits with validate_limits false, but the controller refuses them', async () => {
    const before = await positions(url);
    const res = await fetch(`${url}/trajectory/send`, { method: 'POST', body: JSON.stringify({ validate_limits: false, points: [{ positions: [0, 0, 0, -2.5, 0, 1.57, 0], time_from_start: 3 }] }) });
    assert.equal(res.status, 200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(await positions(url), before);
  });

  const variants: [string, string, string][] = [
    ['joint_N names, upper case and shuffled columns', 'JOINT_7,Time,joint_1,joint_2,joint_3,joint_4,joint_5,joint_6\n0,0.5,0.05,0,0,-1.57,0,1.57\n', ''],
    ['semicolons', `${HEADER.replaceAll(',', ';')}\n0.5;0.05;0;0;-1.57;0;1.57;0\n`, '?separator=%3B'],
    ['a time_from_start column, a BOM, CRLF and blank trailing lines', `\uFEFF${HEADER.replace('t,', 'time_from_start,')}\r\n0.5,0.05,0,0,-1.57,0,1.57,0\r\n\r\n\r\n`, ''],
  ];
  for (const [name, text, query] of variants) {
    it(`accepts a CSV with ${name}`, async () => {
      const res = await fetch(`${url}/trajectory/send_csv${query}`, { method: 'POST', body: csvForm(text, 'points.csv') });
      assert.equal(res.status, 200, JSON.stringify(await res.clone().json()));
      assert.deepEqual(await res.json(), { status: 'sent', points: 1, file: 'points.csv', times_increasing: true });
      await new Promise((resolve) => setTimeout(resolve, 150));
    });
  }

  const badCsv: [string, FormData | string, RegExp][] = [
    ['a missing file part', csvForm(`${HEADER}\n1,0,0,0,0,0,0,0\n`, 'a.csv', 'other'), /other/],
    ['an empty file', csvForm(''), /empty/],
    ['a missing column', csvForm('t,joint1,joint2,joint3,joint4,joint5,joint6\n1,0,0,0,-1.57,0,1.57\n'), /missing column.*joint7/],
    ['a duplicate column', csvForm(`${HEADER},joint_1\n1,0,0,0,-1.57,0,1.57,0,0\n`), /duplicate/],
    ['an unknown column, named', csvForm(`${HEADER},gripper\n1,0,0,0,-1.57,0,1.57,0,0\n`), /gripper/],
    ['a non-numeric cell', csvForm(`${HEADER}\n1,0,zero,0,-1.57,0,1.57,0\n`), /row 2, column joint2/],
    ['a non-finite cell', csvForm(`${HEADER}\n1,0,0,inf,-1.57,0,1.57,0\n`), /row 2, column joint3/],
    ['a row with the wrong number of cells', csvForm(`${HEADER}\n1,0,0,0,-1.57,0,1.57,0\n2,0,0\n`), /row 3: expected 8 cells/],
    ['a negative time', csvForm(`${HEADER}\n-1,0,0,0,-1.57,0,1.57,0\n`), /row 2, column t: time -1 is negative/],
    ['a limit violation', csvForm(`${HEADER}\n1,0,0,0,-2.57,0,1.57,0\n`), /row 2: joint4 = -2.57/],
    ['invalid UTF-8', csvForm(new Uint8Array([0xff, 0xfe, 0x41])), /UTF-8/],
    ['a body that is not multipart', '{"points": []}', /multipart/],
  ];
  for (const [name, body, pattern] of badCsv) {
    it(`rejects a CSV upload with ${name} with 422`, async () => {
      const before = await positions(url);
      const res = await fetch(`${url}/trajectory/send_csv`, { method: 'POST', body });
      assert.equal(res.status, 422);
      const issues = await detail(res);
      assert.match(issues.map((i) => `${i.loc.join('.')} ${i.msg}`).join('\n'), pattern);
      assert.deepEqual(await positions(url), before);
    });
  }

  it('rejects a two-character separator and validate_limits=maybe in the query', async () => {
    for (const query of ['?separator=%3B%3B', '?validate_limits=maybe', '?extra=1']) {
      const res = await fetch(`${url}/trajectory/send_csv${query}`, { method: 'POST', body: csvForm(`${HEADER}\n1,0,0,0,-1.57,0,1.57,0\n`) });
      assert.equal(res.status, 422, query);
      assert.equal((await detail(res))[0]?.loc[0], 'query');
    }
  });

  it('answers 413 to an upload over 10 MiB', async () => {
    const res = await fetch(`${url}/trajectory/send_csv`, { method: 'POST', body: csvForm(new Uint8Array(10 * 1024 * 1024 + 10)) });
    assert.equal(res.status, 413);
    await res.body?.cancel();
  });

  it('bounds n on the log endpoints', async () => {
    for (const [path, bad] of [['/trajectory/logs', ['0', '301', 'abc']], ['/sequences/logs', ['0', '1001']]] as const) {
      for (const n of bad) {
        const res = await fetch(`${url}${path}?n=${n}`);
        assert.equal(res.status, 422, `${path} n=${n}`);
        await res.body?.cancel();
      }
    }
    const lines = ((await (await fetch(`${url}/trajectory/logs?n=300`)).json()) as { lines: string[] }).lines;
    assert.ok(lines.length > 5 && lines.length <= 300);
  });

  it('answers 409 to a trajectory while a move request holds the arm', async () => {
    const move = fetch(`${url}/robot/move/named`, { method: 'POST', body: JSON.stringify({ name: 'home', speed: 0.1 }) });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const res = await fetch(`${url}/trajectory/send`, { method: 'POST', body: JSON.stringify({ points: [{ positions: WORK, time_from_start: 2 }] }) });
    assert.equal(res.status, 409);
    await res.body?.cancel();
    assert.equal(((await (await move).json()) as { success: boolean }).success, true);
  });
});

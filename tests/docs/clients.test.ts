/**
 * docs/clients.md's Python example, as a newcomer would run it: the page's python block, unchanged, against a live
 * server with a token (python3 from PATH; standard library only). It reads the joints, moves and stops; what it
 * prints is what the page says it prints.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PROJECT_ROOT, startTestServer, type TestServer } from '../support/server.ts';

const TOKEN = 'python-client-token-5b1e7d';
const python = spawnSync('python3', ['--version'], { encoding: 'utf8' }).status === 0;

/** The fenced blocks of a language in a markdown text. */
const blocks = (text: string, lang: string) =>
  [...text.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => m[1] as string);

describe("docs/clients.md's Python example against a live server", {
  skip: !python && 'python3 is not on PATH',
}, () => {
  let server: TestServer;
  let dir: string;
  let page: string;
  before(async () => {
    server = await startTestServer({ web: { token: TOKEN }, sim: { time_scale: 5 } });
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-python-'));
    page = await readFile(path.join(PROJECT_ROOT, 'docs', 'clients.md'), 'utf8');
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the joints, moves with a timeout longer than the motion and stops, printing what the page says', async () => {
    const [program] = blocks(page, 'python');
    assert.ok(program, 'the page has a python block');
    const file = path.join(dir, 'first_contact.py');
    await writeFile(file, program);
    const child = spawn('python3', [file], {
      env: { ...process.env, ARMGATE_URL: server.url, ARMGATE_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, `python3 exited ${code}: ${stderr}`);
    const printed = stdout.trim().split('\n');
    const [shown] = blocks(page, 'text');
    const expected = (shown ?? '').trim().split('\n');
    assert.equal(printed.length, 3, stdout);
    assert.equal(printed[0], expected[0], 'the joints as the page shows them (the simulator starts at work)');
    assert.equal(printed[1], expected[1], 'the move finished');
    assert.match(printed[2] ?? '', /^stop: True /);
    const res = await fetch(`${server.url}/robot/joint_states`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const { position } = (await res.json()) as { position: number[] };
    const target = [0.3, 0.4, 0.0, -1.4, 0.0, 1.3, 0.0];
    for (const [j, q] of position.entries()) assert.ok(Math.abs(q - (target[j] ?? 0)) < 1e-3, `joint ${j + 1}: ${q}`);
  });
});

/**
 * Browser check (npm run test:browser): Swagger UI at /docs, served offline from swagger-ui-dist,
 * in Debian's Chromium driven by playwright-core. It authorizes with the bare token, runs
 * GET /robot/joint_states from the page and expects 200 (and 401 in a page that did not
 * authorize); it also checks that /redoc renders, and that no request leaves the machine.
 */
import { existsSync } from 'node:fs';
import { chromium, type Page } from 'playwright-core';
import { startTestServer } from '../support/server.ts';

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'browser-check-token';

async function executeJointStates(page: Page, url: string, authorize: boolean): Promise<string> {
  await page.goto(`${url}/docs`);
  await page.waitForSelector('.swagger-ui .opblock', { timeout: 15_000 });
  if (authorize) {
    await page.click('button.authorize');
    await page.fill('.modal-ux input', TOKEN);
    await page.click('.modal-ux button.modal-btn.auth.authorize');
    await page.click('.modal-ux button.btn-done');
  }
  const op = page.locator('#operations-robot-getJointStates');
  await op.locator('.opblock-summary').click();
  await op.locator('button.try-out__btn').click();
  await op.locator('button.execute').click();
  const status = op.locator('.live-responses-table tbody .response-col_status').first();
  await status.waitFor({ timeout: 15_000 });
  return ((await status.textContent()) ?? '').trim();
}

async function main(): Promise<number> {
  if (!existsSync(CHROMIUM)) {
    process.stderr.write(`browser check: ${CHROMIUM} is missing; install it with: apt-get install -y chromium\n`);
    return 1;
  }
  const server = await startTestServer({ web: { token: TOKEN } });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const outside: string[] = [];
  let passed = 0;
  let failed = 0;
  const check = async (name: string, run: (page: Page) => Promise<void>) => {
    const page = await browser.newPage();
    // A request to another host counts unless the page's Content-Security-Policy blocked it
    // before it left (Chromium reports those as failed with ERR_BLOCKED_BY_CSP).
    const external = (url: string) => !['127.0.0.1', 'localhost', ''].includes(new URL(url).hostname) && !url.startsWith('data:');
    page.on('requestfinished', (r) => {
      if (external(r.url())) outside.push(r.url());
    });
    page.on('requestfailed', (r) => {
      if (external(r.url()) && !/BLOCKED_BY_CSP|^csp$/i.test(r.failure()?.errorText ?? '')) outside.push(`${r.url()} (${r.failure()?.errorText})`);
    });
    try {
      await run(page);
      passed++;
      process.stdout.write(`ok - ${name}\n`);
    } catch (e) {
      failed++;
      process.stdout.write(`not ok - ${name}: ${(e as Error).message.split('\n')[0]}\n`);
      await page.screenshot({ path: '/tmp/armgate-docs-failure.png', fullPage: true }).catch(() => undefined);
    } finally {
      await page.close();
    }
  };
  try {
    await check('/docs authorizes and GET /robot/joint_states answers 200 from the page', async (page) => {
      const status = await executeJointStates(page, server.url, true);
      if (status !== '200') throw new Error(`expected 200, saw ${status}`);
    });
    await check('/docs without authorizing gets 401 from the same call', async (page) => {
      const status = await executeJointStates(page, server.url, false);
      if (status !== '401') throw new Error(`expected 401, saw ${status}`);
    });
    await check('/redoc renders the API reference', async (page) => {
      await page.goto(`${server.url}/redoc`);
      await page.waitForSelector('h1', { timeout: 15_000 });
      const title = (await page.locator('h1').first().textContent()) ?? '';
      if (!title.includes('armgate')) throw new Error(`title is '${title}'`);
    });
    await check('no request leaves the machine', async () => {
      if (outside.length > 0) throw new Error(`requests to ${outside.slice(0, 3).join(', ')}`);
    });
  } finally {
    await browser.close();
    await server.close();
  }
  process.stdout.write(`browser: ${passed} passed, ${failed} failed\n`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`browser check failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);

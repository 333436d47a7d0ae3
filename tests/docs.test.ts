// The documentation as a newcomer meets it: a short README whose links lead somewhere, one page per subject
// under docs/, every page reachable from the README and named on the /docs page.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestApp, PROJECT_ROOT, type TestApp } from './support/server.ts';

const README = path.join(PROJECT_ROOT, 'README.md');
const DOCS = path.join(PROJECT_ROOT, 'docs');
const pages = readdirSync(DOCS)
  .filter((f) => f.endsWith('.md'))
  .sort();
const markdownFiles = [README, ...pages.map((f) => path.join(DOCS, f))];

/** GitHub's anchor of a heading: lower case, punctuation other than '-' and '_' dropped, spaces to '-'. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown file's headings (outside code blocks). */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  let code = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) code = !code;
    else if (!code && /^#{1,6} /.test(line)) anchors.add(slug(line.replace(/^#+ /, '').replace(/`/g, '')));
  }
  return anchors;
}

/** The link targets of a Markdown file that point into the repository (no scheme). */
function localLinks(file: string): string[] {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string).filter((t) => !/^[a-z]+:/i.test(t));
}

describe('documentation', () => {
  it('README.md stays under 250 lines', () => {
    const lines = readFileSync(README, 'utf8').split('\n').length;
    assert.ok(lines < 250, `README.md has ${lines} lines`);
  });

  it('every link in README.md and docs/ leads to a file and heading that exist', () => {
    const broken: string[] = [];
    for (const file of markdownFiles)
      for (const link of localLinks(file)) {
        const [target = '', anchor] = link.split('#');
        const resolved = target ? path.resolve(path.dirname(file), target) : file;
        if (!existsSync(resolved)) broken.push(`${path.relative(PROJECT_ROOT, file)}: ${link} (no such file)`);
        else if (anchor && !anchorsOf(resolved).has(anchor))
          broken.push(`${path.relative(PROJECT_ROOT, file)}: ${link} (no such heading)`);
      }
    assert.deepEqual(broken, []);
  });

  it('README.md links every page of docs/', () => {
    const linked = new Set(localLinks(README).map((l) => l.split('#')[0]));
    assert.deepEqual(
      pages.filter((p) => !linked.has(`docs/${p}`)),
      [],
    );
  });

  describe('the /docs page', () => {
    let app: TestApp;
    before(async () => {
      app = await createTestApp({ web: { token: 'docs-test-token-0123456789' } });
    });
    after(() => app.close());

    it("links every page of docs/ from the OpenAPI document's description, served without a token", async () => {
      const doc = (await (await app.request('/openapi.json')).json()) as { info: { description: string } };
      const links = [...doc.info.description.matchAll(/\]\((\/docs\/guide\/[^)]+)\)/g)].map((m) => m[1] as string);
      assert.deepEqual(links.map((l) => l.slice('/docs/guide/'.length)).sort(), pages);
      for (const link of links) {
        const response = await app.request(link);
        assert.equal(response.status, 200, link);
        assert.equal(response.headers.get('content-type'), 'text/plain; charset=utf-8', link);
        assert.equal(response.headers.get('x-content-type-options'), 'nosniff', link);
        assert.equal(await response.text(), readFileSync(path.join(DOCS, path.basename(link)), 'utf8'), link);
      }
    });

    it('serves nothing else under /docs/guide, and asks for the token elsewhere', async () => {
      for (const probe of [
        '/docs/guide/missing.md',
        '/docs/guide/..%2Fpackage.json',
        '/docs/guide/',
        '/docs/guide/api.txt',
      ]) {
        const response = await app.request(probe);
        assert.ok([401, 404].includes(response.status), `${probe}: ${response.status}`);
        assert.notEqual(response.headers.get('content-type'), 'text/plain; charset=utf-8', probe);
      }
      assert.equal((await app.request('/docs/guide/missing.md')).status, 404);
    });
  });
});

// browser.js — the page in a real browser (make check-web): headless Chromium opens
// build/web/attnlab.html from file://, trains a small model on the copy task to its
// target accuracy in a Worker, and decodes an input; the page must say the run reached
// its target, show the evaluation by length, and decode.
//
// usage: node tests/web/browser.js PAGE_HTML [CHROMIUM]
//   CHROMIUM: the browser to drive (default /usr/bin/chromium); playwright-core (pinned
//   in tests/web/package-lock.json, `npm ci` in tests/web) only drives it: nothing is
//   downloaded. Exit status: 0 when every check holds, 1 otherwise, 2 for bad usage.
'use strict';
const path = require('path');
const {chromium} = require('playwright-core');

async function main() {
    const [html, exe] = process.argv.slice(2);
    if (!html) {
        process.stderr.write('usage: node tests/web/browser.js PAGE_HTML [CHROMIUM]\n');
        process.exit(2);
    }
    const browser = await chromium.launch({
        executablePath: exe || '/usr/bin/chromium',
        args: ['--no-sandbox'], // root in a container has no user namespaces to sandbox
    });
    const failures = [];
    const check = (ok, what) => {
        process.stdout.write(`browser: ${ok ? 'ok' : 'FAILED'}: ${what}\n`);
        if (!ok)
            failures.push(what);
    };
    try {
        const page = await browser.newPage();
        const errors = [];
        page.on('pageerror', (e) => errors.push(String(e)));
        page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
        await page.goto('file://' + path.resolve(html));
        await page.click('button[data-lang=en]');
        // one small transformer on copy 3..6: validate every 25 steps, stop at 0.99
        await page.uncheck('input[value=lstm]');
        await page.uncheck('input[value=rnn_attention]');
        await page.fill('#train-min', '3');
        await page.fill('#train-max', '6');
        await page.selectOption('#preset', 'small');
        await page.fill('#log-every', '25');
        await page.fill('#stop-acc', '0.99');
        await page.fill('#steps', '3000');
        await page.click('#train');
        const card = page.locator('article.run').first();
        // the page stays responsive while the Worker trains: the language switch works
        await page.click('button[data-lang=zh]');
        check(await page.locator('#runs-h').textContent() === '运行', 'the page answers while training');
        await page.click('button[data-lang=en]');
        await card.locator('.decode input').waitFor({timeout: 10 * 60 * 1000});
        const status = await card.locator('.status').textContent();
        check(/reached the target accuracy/.test(status), `the run reached its target (${status})`);
        const rows = await card.locator('figure.panel table tbody tr.in-range').count();
        check(rows > 0, `the evaluation by length shows the training range (${rows} rows)`);
        await card.locator('.decode input').fill('2 7 1 8');
        await card.locator('.decode button').click();
        await card.locator('.decoded').waitFor({timeout: 60 * 1000});
        const decoded = await card.locator('.decoded').textContent();
        check(/decoded: 2 7 1 8/.test(decoded), `decoding 2 7 1 8 gives it back (${decoded.replace(/\n/g, '; ')})`);
        const maps = await card.locator('.decode-out select option').count();
        check(maps > 0, `the decoded input's attention maps are offered (${maps})`);
        check(errors.length === 0, `no script error (${errors.join(' | ')})`);
    } finally {
        await browser.close();
    }
    process.stdout.write(`browser: ${failures.length ? failures.length + ' failed' : 'every check passed'}\n`);
    process.exit(failures.length ? 1 : 0);
}

main().catch((e) => {
    process.stderr.write('browser.js: ' + (e && e.stack || e) + '\n');
    process.exit(1);
});

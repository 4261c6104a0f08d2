// screenshots.js — the pictures of the page in docs/web.md and README.md: headless
// Chromium opens build/web/attnlab.html from file://, trains the three models at the
// small preset on copy 3..8, decodes "3 1 4 1 5" with each, and saves the runs as the
// page shows them, in English and in Chinese.
//
// usage: node tests/web/screenshots.js PAGE_HTML OUT_DIR [CHROMIUM]
//   writes OUT_DIR/page-en.png and OUT_DIR/page-zh.png (1280 pixels wide, the runs from
//   their heading down, at most 2400 pixels tall) and OUT_DIR/page-all-en.png (the
//   section of all runs together, in English). playwright-core (tests/web, `npm ci`)
//   drives Debian's chromium; nothing is downloaded. Exit status 0, 1 on a failure, 2
//   for bad usage.
'use strict';
const path = require('path');
const {openPage, fillForm} = require('./helper.js');

async function main() {
    const [html, out, exe] = process.argv.slice(2);
    if (!html || !out) {
        process.stderr.write('usage: node tests/web/screenshots.js PAGE_HTML OUT_DIR [CHROMIUM]\n');
        process.exit(2);
    }
    const {browser, page} = await openPage(html, exe, {width: 1280, height: 900});
    try {
        await fillForm(page, {models: ['lstm', 'rnn_attention', 'transformer'], lengths: [3, 8],
                              preset: 'small', logEvery: 25, stopAcc: 0.99, steps: 1500});
        await page.click('#train');
        const cards = page.locator('article.run');
        const long = {timeout: 20 * 60 * 1000};
        for (let i = 0; i < 3; i++)
            await cards.nth(i).locator('[data-figure=positions] svg').waitFor(long);
        const maps = ['gates', 'attention_rnn', 'attention_cross'];
        for (let i = 0; i < 3; i++) {
            await cards.nth(i).locator('.decode input').fill('3 1 4 1 5');
            await cards.nth(i).locator('.decode button').click();
            await cards.nth(i).locator(`[data-figure=${maps[i]}] svg`).waitFor(long);
        }
        await page.waitForFunction(() => !document.querySelector('article.run.drawing'), null, long);
        for (const lang of ['en', 'zh']) {
            await page.click(`button[data-lang=${lang}]`);
            const box = await page.locator('#runs').boundingBox();
            const file = path.join(out, `page-${lang}.png`);
            await page.screenshot({path: file, fullPage: true,
                                   clip: {x: 0, y: box.y - 8, width: 1280,
                                          height: Math.min(2400, box.height + 16)}});
            process.stdout.write(`wrote ${file}\n`);
        }
        // every run together: the summary and the comparison figures, in English
        await page.click('button[data-lang=en]');
        await page.locator('#all [data-figure=budget] svg').waitFor(long);
        await page.waitForFunction(() => !document.querySelector('#all.drawing'), null, long);
        const all = await page.locator('#all').boundingBox();
        const file = path.join(out, 'page-all-en.png');
        await page.screenshot({path: file, fullPage: true,
                               clip: {x: 0, y: all.y - 8, width: 1280,
                                      height: Math.min(2400, all.height + 16)}});
        process.stdout.write(`wrote ${file}\n`);
    } finally {
        await browser.close();
    }
}

main().catch((e) => {
    process.stderr.write('screenshots.js: ' + (e && e.stack || e) + '\n');
    process.exit(1);
});

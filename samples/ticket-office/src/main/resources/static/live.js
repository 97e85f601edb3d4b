// The live page: polls this node's API and Actuator every second; no build step, no library.
(function () {
    'use strict';

    const REFRESH_MS = 1000;
    const WINDOW_MS = 60000;
    const history = [];   // {t, rate, p99} of the last minute
    let previous = null;  // {t, acquired} of the last refresh

    const $ = id => document.getElementById(id);

    async function json(url) {
        const response = await fetch(url, { cache: 'no-store' });
        if (response.status === 404) {
            return null;   // a meter that has not recorded anything yet on this node
        }
        if (!response.ok) {
            throw new Error(url + ': HTTP ' + response.status);
        }
        return response.json();
    }

    async function metric(name, tags, statistic) {
        const query = tags.map(tag => 'tag=' + encodeURIComponent(tag)).join('&');
        const body = await json('actuator/metrics/' + name + (query ? '?' + query : ''));
        if (!body) {
            return null;
        }
        const measurement = body.measurements.find(m => m.statistic === statistic);
        return measurement ? measurement.value : null;
    }

    function show(id, value, text) {
        const element = $(id);
        element.dataset.value = value === null || value === undefined ? '' : String(value);
        element.textContent = text;
    }

    function ms(seconds) {
        if (seconds === null) {
            return '–';
        }
        const value = seconds * 1000;
        return (value < 10 ? value.toFixed(1) : Math.round(value)) + ' ms';
    }

    function cell(text) {
        const td = document.createElement('td');
        td.textContent = text;
        return td;
    }

    function rows(tbody, items, columns, empty) {
        tbody.replaceChildren();
        if (items.length === 0) {
            const td = cell(empty);
            td.colSpan = 6;
            td.className = 'muted';
            const tr = document.createElement('tr');
            tr.appendChild(td);
            tbody.appendChild(tr);
            return;
        }
        for (const item of items) {
            const tr = document.createElement('tr');
            for (const column of columns) {
                tr.appendChild(cell(column(item)));
            }
            tbody.appendChild(tr);
        }
    }

    async function refresh() {
        const now = Date.now();
        const [node, locks, acquired, waits, lost, shows] = await Promise.all([
            json('api/node'),
            json('actuator/leasehold'),
            metric('leasehold.lock.acquire', ['result:acquired'], 'COUNT'),
            json('api/lock-waits'),   // p50 and p99 of one snapshot (two metric queries could disagree)
            metric('leasehold.lock.lost', [], 'COUNT'),
            json('api/shows'),
        ]);
        const p99 = waits.count > 0 ? waits.p99Millis / 1000 : null;
        const p50 = waits.count > 0 ? waits.p50Millis / 1000 : null;
        $('node').textContent = node.node;
        document.title = 'Ticket office ' + node.node + ': Leasehold live';

        show('locks-held', locks.held.length, String(locks.held.length));
        rows($('held-rows'), locks.held, [
            lock => lock.key, lock => lock.mode, lock => lock.fencingToken,
            lock => lock.heldForMillis + ' ms', lock => lock.leaseLeftMillis + ' ms'], 'none');

        const total = acquired === null ? 0 : Math.round(acquired);
        show('acquisitions-total', total, String(total));
        let rate = null;
        if (previous !== null && now > previous.t) {
            rate = Math.max(0, (total - previous.acquired) * 1000 / (now - previous.t));
        }
        previous = { t: now, acquired: total };
        show('acquisitions-rate', rate === null ? null : Math.round(rate), rate === null ? '–' : String(Math.round(rate)));
        show('wait-p99', p99, ms(p99));
        show('wait-p50', p50, ms(p50));
        const lostCount = lost === null ? 0 : Math.round(lost);
        show('lost', lostCount, String(lostCount));

        const seatsLeft = shows.reduce((sum, s) => sum + s.seatsLeft, 0);
        const oversold = shows.reduce((sum, s) => sum + s.oversold, 0);
        show('seats-left', seatsLeft, String(seatsLeft));
        show('oversold', oversold, String(oversold));
        $('oversold').className = 'value ' + (oversold > 0 ? 'bad' : 'good');
        rows($('show-rows'), shows, [
            s => s.id, s => s.title, s => s.seatsTotal, s => s.seatsLeft, s => s.booked, s => s.oversold], 'no shows');
        for (const [i, s] of shows.entries()) {
            $('show-rows').children[i].dataset.showId = String(s.id);
        }
        document.dispatchEvent(new CustomEvent('live:shows', { detail: { shows: shows } })); // cluster.js

        if (rate !== null) {
            history.push({ t: now, rate: rate, p99: p99 === null ? 0 : p99 * 1000 });
        }
        while (history.length > 0 && history[0].t < now - WINDOW_MS) {
            history.shift();
        }
        draw(now);
        document.body.dataset.points = String(history.length);
        document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes || 0) + 1);
    }

    function draw(now) {
        const canvas = $('chart');
        const ratio = window.devicePixelRatio || 1;
        const width = canvas.clientWidth || canvas.width;
        const height = canvas.clientHeight || canvas.height;
        canvas.width = width * ratio;
        canvas.height = height * ratio;
        const g = canvas.getContext('2d');
        g.scale(ratio, ratio);
        g.clearRect(0, 0, width, height);
        const left = 44, right = 50, top = 10, bottom = 22;
        const plotWidth = width - left - right, plotHeight = height - top - bottom;
        const maxRate = niceMax(Math.max(1, ...history.map(p => p.rate)));
        const maxP99 = niceMax(Math.max(1, ...history.map(p => p.p99)));
        const x = t => left + plotWidth * (1 - (now - t) / WINDOW_MS);

        g.font = '11px system-ui, sans-serif';
        g.strokeStyle = '#eceef3';
        g.fillStyle = '#6b7385';
        for (let i = 0; i <= 4; i++) {
            const y = top + plotHeight * i / 4;
            g.beginPath();
            g.moveTo(left, y);
            g.lineTo(left + plotWidth, y);
            g.stroke();
            g.textAlign = 'right';
            g.fillText(String(Math.round(maxRate * (4 - i) / 4)), left - 6, y + 4);
            g.textAlign = 'left';
            g.fillText(String(Math.round(maxP99 * (4 - i) / 4)), left + plotWidth + 6, y + 4);
        }
        g.textAlign = 'center';
        for (let s = 60; s >= 0; s -= 15) {
            g.fillText(s === 0 ? 'now' : '-' + s + 's', x(now - s * 1000), height - 6);
        }
        line(g, history.map(p => [x(p.t), top + plotHeight * (1 - p.rate / maxRate)]), '#3f6ad8');
        line(g, history.map(p => [x(p.t), top + plotHeight * (1 - p.p99 / maxP99)]), '#e0892b');
    }

    function line(g, points, color) {
        if (points.length === 0) {
            return;
        }
        g.strokeStyle = color;
        g.lineWidth = 2;
        g.beginPath();
        points.forEach(([px, py], i) => (i === 0 ? g.moveTo(px, py) : g.lineTo(px, py)));
        g.stroke();
        g.lineWidth = 1;
    }

    function niceMax(value) {
        const magnitude = Math.pow(10, Math.floor(Math.log10(value)));
        for (const step of [1, 2, 5, 10]) {
            if (value <= step * magnitude) {
                return step * magnitude;
            }
        }
        return 10 * magnitude;
    }

    async function loop() {
        try {
            await refresh();
            $('status').textContent = 'live';
            $('status').className = 'status ok';
        }
        catch (error) {
            $('status').textContent = 'cannot reach the node: ' + error.message;
            $('status').className = 'status error';
        }
        setTimeout(loop, REFRESH_MS);
    }

    loop();
})();

// The cluster panel of the live page: one show's lock as Redis sees it, whichever node holds it, from
// /actuator/leasehold/{key} about 20 times a second: the holder, the instances queued for it in Redis's fair
// queue (in order), and a strip of the last seconds with one row per instance. No build step, no library.
(function () {
    'use strict';

    const POLL_MS = 50;
    const STRIP_MS = 10000;
    const COLORS = ['#3f6ad8', '#e0892b', '#2e9d5b', '#b4457f', '#7a5cc4', '#c9a227', '#3aa6b9', '#8c6d46'];

    const samples = [];          // {t, holders: [instance ids], queue: [instance ids]} of the last STRIP_MS
    const colors = new Map();    // instance id -> color, in the order instances were first seen
    let self = null;             // {instance, host, node}: this node
    let names = {};              // instance id -> node name (api/nodes: every instance registers its name)
    let namesAsked = 0;          // when api/nodes was last asked (an unknown instance asks again, at most once a second)
    let followed = null;         // {key, pinned}: the show key followed now
    let lastBooked = new Map();  // show id -> booked at the previous refresh of the shows

    const $ = id => document.getElementById(id);

    async function json(url) {
        const response = await fetch(url, { cache: 'no-store' });
        if (!response.ok) {
            throw new Error(url + ': HTTP ' + response.status);
        }
        return response.json();
    }

    // an instance id is "host:pid:random" (the lock's owner tokens never leave Redis)
    function parse(instance) {
        const parts = instance.split(':');
        const random = parts.pop();
        const pid = parts.pop() || '?';
        return { host: parts.join(':'), pid: pid, random: random };
    }

    function label(instance) {
        if (self && instance === self.instance) {
            return self.node + ' (this node)';
        }
        if (names[instance]) {
            return names[instance];
        }
        const { host, pid, random } = parse(instance);
        if (!self || host !== self.host) {
            return host + ' pid ' + pid;
        }
        // two instances in one process (tests) differ only by the random part
        return 'pid ' + pid + (pid === parse(self.instance).pid ? ' #' + random : '');
    }

    function color(instance) {
        if (!colors.has(instance)) {
            colors.set(instance, COLORS[colors.size % COLORS.length]);
        }
        return colors.get(instance);
    }

    function chip(instance, text) {
        const span = document.createElement('span');
        span.className = 'chip';
        span.style.background = color(instance);
        span.title = instance;
        span.textContent = text;
        return span;
    }

    // follow the show whose bookings grew most since the last refresh (a click on a show pins it)
    document.addEventListener('live:shows', event => {
        const shows = event.detail.shows;
        if (!followed || !followed.pinned) {
            let busiest = null;
            let most = 0;
            for (const s of shows) {
                const grew = s.booked - (lastBooked.has(s.id) ? lastBooked.get(s.id) : s.booked);
                if (grew > most) {
                    most = grew;
                    busiest = s;
                }
            }
            if (busiest) {
                follow('show:' + busiest.id, false);
            }
            else if (!followed && shows.length > 0) {
                follow('show:' + shows[shows.length - 1].id, false);
            }
        }
        lastBooked = new Map(shows.map(s => [s.id, s.booked]));
    });

    $('show-rows').addEventListener('click', event => {
        const row = event.target.closest('tr[data-show-id]');
        if (row) {
            follow('show:' + row.dataset.showId, true);
        }
    });

    function follow(key, pinned) {
        if (!followed || followed.key !== key) {
            samples.length = 0;
        }
        followed = { key: key, pinned: pinned };
        $('cluster-key').textContent = key + (pinned ? ' (pinned)' : '');
        $('cluster-key').dataset.value = key;
    }

    async function poll() {
        if (!self) {
            const [locks, node] = await Promise.all([json('actuator/leasehold'), json('api/node')]);
            self = { instance: locks.instanceId, host: parse(locks.instanceId).host, node: node.node };
            color(self.instance);
        }
        if (!followed) {
            return;
        }
        const key = followed.key;
        const state = await json('actuator/leasehold/' + encodeURI(key));
        if (!followed || followed.key !== key) {
            return;
        }
        const now = Date.now();
        const seen = (state.holders || []).concat((state.queue || []).map(q => q.instance));
        if (seen.some(instance => !names[instance]) && now - namesAsked > 1000) {
            namesAsked = now;
            names = await json('api/nodes');
        }
        samples.push({ t: now, holders: state.holders || [], queue: (state.queue || []).map(q => q.instance) });
        while (samples.length > 0 && samples[0].t < now - STRIP_MS) {
            samples.shift();
        }
        render(state);
        draw(now);
    }

    function render(state) {
        const holder = $('holder');
        holder.replaceChildren();
        holder.dataset.instance = state.holders && state.holders.length > 0 ? state.holders[0] : '';
        if (!state.held) {
            holder.textContent = 'free';
        }
        for (const instance of state.holders || []) {
            holder.appendChild(chip(instance, label(instance)));
        }
        $('holder-detail').textContent = state.held
            ? state.mode + (state.mode === 'READ' ? ' (' + state.readers + ' readers)' : '') + ', lease left '
                + state.leaseLeftMillis + ' ms, fencing counter ' + state.fencingCounter
            : 'fencing counter ' + state.fencingCounter;

        const queue = $('queue');
        queue.replaceChildren();
        for (const waiting of state.queue || []) {
            const li = document.createElement('li');
            li.dataset.instance = waiting.instance;
            li.appendChild(chip(waiting.instance, label(waiting.instance)));
            li.appendChild(document.createTextNode(waiting.mode === 'READ' ? ' reader' : ''));
            queue.appendChild(li);
        }
        if (queue.children.length === 0) {
            const li = document.createElement('li');
            li.className = 'muted';
            li.textContent = 'nobody';
            queue.appendChild(li);
        }

        const turns = countTurns();
        $('turns').textContent = String(turns.count);
        $('turns').dataset.value = String(turns.count);
        $('turn-length').textContent = turns.count > 0 ? Math.round(turns.heldMs / turns.count) + ' ms' : '–';
        document.body.dataset.stripSamples = String(samples.length);
        document.body.dataset.stripHolders = String(turns.holders.size);
        document.body.dataset.stripQueued = String(new Set(samples.flatMap(s => s.queue)).size);
    }

    // a turn: one instance holding the key, from when it got it until another instance did (free gaps between
    // two samples of the same holder belong to its turn: its threads handed the key on locally)
    function countTurns() {
        let count = 0;
        let heldMs = 0;
        let previous = null;
        const holders = new Set();
        samples.forEach((sample, i) => {
            const holder = sample.holders.length === 1 ? sample.holders[0] : null;
            if (holder !== null) {
                holders.add(holder);
                if (holder !== previous) {
                    count++;
                    previous = holder;
                }
                if (i + 1 < samples.length) {
                    heldMs += samples[i + 1].t - sample.t;
                }
            }
        });
        return { count: count, heldMs: heldMs, holders: holders };
    }

    function draw(now) {
        const canvas = $('strip');
        const ratio = window.devicePixelRatio || 1;
        const width = canvas.clientWidth || canvas.width;
        const rows = [...colors.keys()].filter(instance =>
            samples.some(s => s.holders.includes(instance) || s.queue.includes(instance)));
        const rowHeight = 22;
        const top = 4, bottom = 18, left = 150;
        const height = top + bottom + Math.max(1, rows.length) * rowHeight;
        canvas.style.height = height + 'px';
        canvas.width = width * ratio;
        canvas.height = height * ratio;
        const g = canvas.getContext('2d');
        g.scale(ratio, ratio);
        g.clearRect(0, 0, width, height);
        const plotWidth = width - left - 8;
        const x = t => left + plotWidth * (1 - (now - t) / STRIP_MS);
        g.font = '11px system-ui, sans-serif';
        g.textAlign = 'right';
        rows.forEach((instance, row) => {
            const y = top + row * rowHeight;
            g.fillStyle = '#6b7385';
            g.fillText(label(instance), left - 8, y + 15);
            g.fillStyle = '#f1f3f8';
            g.fillRect(left, y + 3, plotWidth, rowHeight - 6);
            samples.forEach((sample, i) => {
                const end = i + 1 < samples.length ? samples[i + 1].t : now;
                const holds = sample.holders.includes(instance);
                const queued = sample.queue.includes(instance);
                if (!holds && !queued) {
                    return;
                }
                g.globalAlpha = holds ? 1 : 0.3;
                g.fillStyle = color(instance);
                const y0 = holds ? y + 3 : y + 8;
                g.fillRect(x(sample.t), y0, Math.max(1, x(end) - x(sample.t)), holds ? rowHeight - 6 : rowHeight - 16);
                g.globalAlpha = 1;
            });
        });
        g.fillStyle = '#6b7385';
        g.textAlign = 'center';
        for (let s = 10; s >= 0; s -= 2) {
            g.fillText(s === 0 ? 'now' : '-' + s + 's', x(now - s * 1000), height - 4);
        }
    }

    async function loop() {
        const started = Date.now();
        try {
            await poll();
        }
        catch (error) {
            $('holder-detail').textContent = 'cannot read the key: ' + error.message;
        }
        setTimeout(loop, Math.max(0, POLL_MS - (Date.now() - started)));
    }

    loop();
})();

// The Varulv sandbox page: a small chat client over the sandbox's JSON API.
// It renders what each person sees in the fake Slack (Block Kit included) and acts as them.
// Plain JS, no build step, nothing fetched from anywhere but this server.
"use strict";

(() => {
  // -- state ----------------------------------------------------------------------------

  const store = {
    workspace: null,
    version: -1,
    states: {}, // person id -> what that person sees (GET /api/state)
    me: null, // the person played in the one-person view
    view: "one", // "one" | "everyone"
    open: {}, // person id -> "channel" | "dm" | "home"
    seen: {}, // person id -> { channel: ts, dm: ts }: the newest message they have looked at
    homeOpened: {}, // person id -> true once the Home tab was opened this visit
    // The newest message when the page loaded: as in Slack, an ephemeral message from before
    // a reload is gone, and only those that arrive on this page are shown.
    loadedAfter: null,
  };
  const panes = new Map(); // person id -> Pane currently on screen
  const AVATAR_COLOURS = ["#e8912d", "#2bac76", "#4a8bd6", "#cd2553", "#8f5bd6", "#1c9a9a"];

  // -- talking to the server ------------------------------------------------------------

  async function getJSON(path) {
    const response = await fetch(path, { cache: "no-store" });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    return response.json();
  }

  async function postJSON(path, body) {
    const response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    let answer = {};
    try {
      answer = await response.json();
    } catch (_) {
      answer = { ok: false, error: `HTTP ${response.status}` };
    }
    if (!response.ok || answer.ok === false) {
      const error = new Error(answer.error || `HTTP ${response.status}`);
      error.answer = answer;
      throw error;
    }
    return answer;
  }

  async function refresh() {
    const ids = store.workspace.people.map((p) => p.id);
    const states = await Promise.all(ids.map((id) => getJSON(`/api/state?as=${encodeURIComponent(id)}`)));
    if (store.loadedAfter === null) {
      const stamps = states.flatMap((s) => [...s.channel.messages, ...s.dm.messages]);
      store.loadedAfter = Math.max(0, ...stamps.map((m) => Number(m.ts)));
    }
    for (const state of states) {
      for (const conversation of [state.channel, state.dm]) {
        conversation.messages = conversation.messages.filter(
          (m) => !m.ephemeral || Number(m.ts) > store.loadedAfter,
        );
      }
    }
    ids.forEach((id, index) => (store.states[id] = states[index]));
    // The oldest snapshot decides: anything newer than it is fetched on the next round.
    store.version = Math.min(...states.map((s) => s.version));
    render();
  }

  async function follow() {
    let failures = 0;
    for (;;) {
      try {
        const { version } = await getJSON(`/api/changes?since=${store.version}&wait=25`);
        if (version !== store.version) await refresh();
        failures = 0;
        document.body.classList.remove("offline");
      } catch (_) {
        failures += 1;
        if (failures > 1) document.body.classList.add("offline");
        await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 500 * failures)));
      }
    }
  }

  // -- small helpers --------------------------------------------------------------------

  function el(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "html") node.innerHTML = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // replaceChildren, skipping null/false and flattening arrays the way el() does.
  function setChildren(node, ...children) {
    node.replaceChildren(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
  }

  function escapeHtml(text) {
    return String(text)
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;");
  }

  function person(id) {
    return store.workspace.people.find((p) => p.id === id);
  }

  function nameOf(userId) {
    return store.workspace.names[userId] || userId;
  }

  function avatar(userId, size = "") {
    const app = store.workspace.app.id;
    if (userId === app) return el("div", { class: `avatar app ${size}`, "aria-hidden": "true" }, "🐺");
    if (userId === "USLACKBOT") return el("div", { class: `avatar slackbot ${size}`, "aria-hidden": "true" }, "💬");
    const index = store.workspace.people.findIndex((p) => p.id === userId);
    const colour = AVATAR_COLOURS[(index >= 0 ? index : userId.length) % AVATAR_COLOURS.length];
    const node = el("div", { class: `avatar ${size}`, "aria-hidden": "true" }, nameOf(userId).slice(0, 1));
    node.style.background = colour;
    return node;
  }

  // How a reader reads dates and times, as Slack draws them for each person: their locale
  // (which also names their language) and their time zone, from their profile.
  function readerOf(viewer) {
    const someone = person(viewer) || {};
    const locale = someone.locale || "en-US";
    return { locale, language: locale.split("-")[0], timeZone: someone.tz || "UTC" };
  }

  function clock(seconds, viewer) {
    const { locale, timeZone } = readerOf(viewer);
    return new Date(seconds * 1000).toLocaleTimeString(locale, { hour: "numeric", minute: "2-digit", timeZone });
  }

  // Slack's own words beside a form, in the reader's language.
  const OPTIONAL = { en: "(optional)", sv: "(valfritt)" };

  let toastTimer = null;
  function toast(text) {
    const node = document.getElementById("toast");
    node.textContent = text;
    node.classList.add("shown");
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => node.classList.remove("shown"), 4000);
  }

  // -- mrkdwn ---------------------------------------------------------------------------

  const EMOJI = {
    wolf: "🐺", smiling_imp: "😈", crystal_ball: "🔮", moneybag: "💰", owl: "🦉",
    twisted_rightwards_arrows: "🔀", skull: "💀", trophy: "🏆", crescent_moon: "🌙",
    new_moon: "🌑", full_moon: "🌕", sunrise: "🌅", sunny: "☀️", ballot_box_with_ballot: "🗳️",
    ballot_box: "🗳️", speech_balloon: "💬", eyes: "👀", zzz: "💤", hourglass: "⌛",
    hourglass_flowing_sand: "⏳", alarm_clock: "⏰", white_check_mark: "✅", heavy_check_mark: "✔️",
    x: "❌", warning: "⚠️", tada: "🎉", coffee: "☕", cake: "🍰", bread: "🍞", cookie: "🍪",
    crown: "👑", ghost: "👻", robot_face: "🤖", robot: "🤖", bust_in_silhouette: "👤",
    busts_in_silhouette: "👥", question: "❓", exclamation: "❗", thinking_face: "🤔",
    slightly_smiling_face: "🙂", smile: "😄", wave: "👋", clap: "👏", point_right: "👉",
    point_up: "☝️", lock: "🔒", key: "🔑", dagger_knife: "🗡️", dagger: "🗡️",
    game_die: "🎲", black_joker: "🃏", flower_playing_cards: "🎴", scroll: "📜",
    house: "🏠", house_with_garden: "🏡", candle: "🕯️", fire: "🔥", star: "⭐",
    sparkles: "✨", medal: "🏅", first_place_medal: "🥇", heart: "❤️", broken_heart: "💔",
    see_no_evil: "🙈", shushing_face: "🤫", mag: "🔍", bell: "🔔", stopwatch: "⏱️",
    arrows_counterclockwise: "🔄", repeat: "🔁", raised_hand: "✋", hand: "✋", no_entry: "⛔",
    information_source: "ℹ️", bulb: "💡", memo: "📝", calendar: "📆", tent: "⛺",
    evergreen_tree: "🌲", deciduous_tree: "🌳", night_with_stars: "🌃", city_sunrise: "🌇",
  };

  function emojify(html) {
    return html.replace(/:([a-z0-9_+\-]+):/g, (whole, name) => EMOJI[name] || whole);
  }

  const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December"];
  const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

  function ordinal(day) {
    const tens = day % 100;
    if (tens >= 11 && tens <= 13) return `${day}th`;
    return `${day}${{ 1: "st", 2: "nd", 3: "rd" }[day % 10] || "th"}`;
  }

  // The calendar day of a moment in a time zone: year, month (0-11), day and weekday (0-6).
  function calendarDay(date, timeZone) {
    const parts = {};
    const format = new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric", month: "numeric",
      day: "numeric", weekday: "short" });
    for (const part of format.formatToParts(date)) parts[part.type] = part.value;
    const weekday = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].indexOf(parts.weekday);
    return { y: Number(parts.year), m: Number(parts.month) - 1, d: Number(parts.day), weekday };
  }

  // Slack's <!date^EPOCH^TOKEN_STRING^OPTIONAL_LINK|FALLBACK>, in the reader's locale, language
  // and time zone: each person sees the moment on their own clock, in their own words.
  function formatDate(epoch, format, viewer) {
    const { locale, language, timeZone } = readerOf(viewer);
    const date = new Date(epoch * 1000);
    const { y, m, d, weekday } = calendarDay(date, timeZone);
    const dateNum = `${y}-${String(m + 1).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
    const inLocale = (options) => new Intl.DateTimeFormat(locale, { timeZone, ...options }).format(date);
    let dateText, dateShort, dateLong;
    if (language === "en") { // Slack's English forms: "November 15th, 2023"
      dateText = `${MONTHS[m]} ${ordinal(d)}, ${y}`;
      dateShort = `${MONTHS[m].slice(0, 3)} ${d}, ${y}`;
      dateLong = `${WEEKDAYS[weekday]}, ${dateText}`;
    } else {
      dateText = inLocale({ day: "numeric", month: "long", year: "numeric" });
      dateShort = inLocale({ day: "numeric", month: "short", year: "numeric" });
      dateLong = inLocale({ weekday: "long", day: "numeric", month: "long", year: "numeric" });
    }
    const today = calendarDay(new Date(), timeZone);
    const days = Math.round((Date.UTC(y, m, d) - Date.UTC(today.y, today.m, today.d)) / 86400000);
    const relative = new Intl.RelativeTimeFormat(locale, { numeric: "auto" });
    const pretty = (fallback) => (Math.abs(days) <= 1 ? relative.format(days, "day") : fallback);
    const seconds = Math.round((date.getTime() - Date.now()) / 1000);
    const ago = (() => {
      const span = Math.abs(seconds);
      const [unit, count] = span < 60 ? ["second", span] : span < 3600 ? ["minute", Math.round(span / 60)]
        : span < 86400 ? ["hour", Math.round(span / 3600)] : ["day", Math.round(span / 86400)];
      return new Intl.RelativeTimeFormat(locale, { numeric: "always" })
        .format(seconds <= 0 ? -count : count, unit);
    })();
    const tokens = {
      date_num: dateNum,
      date: dateText,
      date_short: dateShort,
      date_long: dateLong,
      date_pretty: pretty(dateText),
      date_short_pretty: pretty(dateShort),
      date_long_pretty: pretty(dateLong),
      time: inLocale({ hour: "numeric", minute: "2-digit" }),
      time_secs: inLocale({ hour: "numeric", minute: "2-digit", second: "2-digit" }),
      ago,
    };
    return format.replace(/\{(\w+)\}/g, (whole, token) => tokens[token] ?? whole);
  }

  // The parts of Slack's text inside <…>: mentions, channels, dates, links and specials.
  function renderToken(inner, viewer) {
    const [target, label] = splitOnce(inner, "|");
    if (target.startsWith("@")) {
      const id = target.slice(1);
      const me = id === viewer ? " me" : "";
      return `<span class="mention${me}" data-user="${escapeHtml(id)}">@${escapeHtml(nameOf(id))}</span>`;
    }
    if (target.startsWith("#")) {
      const id = target.slice(1);
      const name = label || store.workspace.channels[id] || id;
      return `<span class="channel-link" data-channel="${escapeHtml(id)}">#${escapeHtml(name)}</span>`;
    }
    if (target.startsWith("!date^")) {
      const [, epoch, format, link] = target.split("^");
      const text = Number.isFinite(Number(epoch)) ? formatDate(Number(epoch), format || "", viewer)
        : escapeHtml(label || "");
      const safe = escapeHtml(text);
      return link ? `<a href="${escapeHtml(link)}" target="_blank" rel="noopener">${safe}</a>`
        : `<time class="slack-date" title="${escapeHtml(label || "")}">${safe}</time>`;
    }
    if (target.startsWith("!")) {
      const special = target.slice(1).split("^")[0];
      const words = { here: "@here", channel: "@channel", everyone: "@everyone" };
      return `<span class="mention broadcast">${escapeHtml(words[special] || label || special)}</span>`;
    }
    if (/^(https?:|mailto:)/.test(target)) {
      const text = label || target.replace(/^mailto:/, "");
      return `<a href="${escapeHtml(target)}" target="_blank" rel="noopener">${escapeHtml(unescapeSlack(text))}</a>`;
    }
    return escapeHtml(`<${inner}>`);
  }

  function splitOnce(text, separator) {
    const at = text.indexOf(separator);
    return at < 0 ? [text, ""] : [text.slice(0, at), text.slice(at + 1)];
  }

  function unescapeSlack(text) {
    return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  }

  // A bare address, as Slack links it in text that is not verbatim: the punctuation closing a
  // sentence, a bracket or an emphasis around it stays outside the link.
  function bareLink(address) {
    let url = address;
    for (;;) {
      const last = url.slice(-1);
      const unbalanced = last === ")" && url.split("(").length < url.split(")").length;
      if (!".,;:!?'\"*_~".includes(last) && !unbalanced) break;
      url = url.slice(0, -1);
    }
    const plainUrl = unescapeSlack(url);
    return { url: plainUrl, rest: address.slice(url.length) };
  }

  // Slack's mrkdwn: *bold*, _italic_, ~strike~, `code`, ```pre```, > quotes, emoji, <tokens>,
  // and, unless the text object is verbatim, bare web addresses as links.
  function mrkdwn(text, viewer, verbatim = false) {
    const held = [];
    const hold = (html) => `\u0000${held.push(html) - 1}\u0000`;
    let source = String(text ?? "");
    source = source.replace(/```([\s\S]*?)```\n?/g, (_, code) =>
      hold(`<pre class="code-block">${escapeHtml(unescapeSlack(code.replace(/^\n/, "")))}</pre>`));
    source = source.replace(/`([^`\n]+)`/g, (_, code) => hold(`<code>${escapeHtml(unescapeSlack(code))}</code>`));
    source = source.replace(/<([^<>\n]+)>/g, (_, inner) => hold(renderToken(inner, viewer)));
    if (!verbatim) {
      source = source.replace(/(?<![A-Za-z0-9])https?:\/\/(?:(?!&[lg]t;)[^\s<>\u0000])+/g, (address) => {
        const { url, rest } = bareLink(address);
        const safe = escapeHtml(url);
        return hold(`<a href="${safe}" target="_blank" rel="noopener">${safe}</a>`) + rest;
      });
    }
    let html = escapeHtml(unescapeSlack(source));
    // After escaping, quotes and brackets are entities: "&" and ";" count as edges too. One
    // emphasis may sit inside another (_*Bosse* (bot)'s swap_), so a marker, or a tag an
    // outer or inner one already became, is an edge as well.
    const edge = "(^|[\\s(\\u0000;'\\[{>*_~])";
    const end = "(?=$|[\\s).,!?:;&'\\]}\\u0000\\-—…<*_~])";
    html = html.replace(new RegExp(`${edge}\\*(?!\\s)([^*\\n]*?[^*\\s])\\*${end}`, "g"), "$1<b>$2</b>");
    html = html.replace(new RegExp(`${edge}\\*([^*\\s])\\*${end}`, "g"), "$1<b>$2</b>");
    html = html.replace(new RegExp(`${edge}_(?!\\s)([^_\\n]*?[^_\\s])_${end}`, "g"), "$1<i>$2</i>");
    html = html.replace(new RegExp(`${edge}~(?!\\s)([^~\\n]*?[^~\\s])~${end}`, "g"), "$1<s>$2</s>");
    // A quote is a block of its own: no line break after it.
    html = html
      .split("\n")
      .map((line) => (line.startsWith("&gt; ") || line === "&gt;"
        ? `<span class="quote">${line.replace(/^&gt; ?/, "")}</span>` : `${line}<br>`))
      .join("")
      .replace(/<br>$/, "");
    html = emojify(html);
    return html.replace(/\u0000(\d+)\u0000/g, (_, index) => held[Number(index)]);
  }

  function textObject(object, viewer, className = "") {
    if (!object) return el("span");
    if (object.type === "mrkdwn") {
      return el("span", { class: `mrkdwn ${className}`, html: mrkdwn(object.text, viewer, object.verbatim === true) });
    }
    const html = escapeHtml(object.text ?? "").replace(/\n/g, "<br>");
    return el("span", { class: `plain ${className}`, html: object.emoji === false ? html : emojify(html) });
  }

  function plain(object) {
    return object ? emojify(escapeHtml(object.text ?? "")) : "";
  }

  // -- Block Kit ------------------------------------------------------------------------

  // Context for rendering blocks: who sees them, and how to act on them.
  class Surface {
    constructor(viewer, act) {
      this.viewer = viewer;
      this.act = act; // (actionId, value, element, control) -> Promise, or null (read-only)
    }
  }

  function blocks(list, surface) {
    return el("div", { class: "blocks" }, (list || []).map((block) => renderBlock(block, surface)));
  }

  function renderBlock(block, surface) {
    switch (block.type) {
      case "header":
        return el("div", { class: "bk-header", html: plain(block.text) });
      case "section":
        return section(block, surface);
      case "context":
        return el("div", { class: "bk-context" }, (block.elements || []).map((item) =>
          item.type === "image" ? image(item, "bk-context-image") : textObject(item, surface.viewer)));
      case "divider":
        return el("hr", { class: "bk-divider" });
      case "actions":
        return el("div", { class: "bk-actions" }, (block.elements || []).map((item) => element(item, surface)));
      case "image":
        return el("figure", { class: "bk-image-block" },
          block.title ? el("figcaption", { html: plain(block.title) }) : null, image(block, "bk-image"));
      case "rich_text":
        return el("div", { class: "bk-rich" }, (block.elements || []).map((part) => richPart(part, surface)));
      case "input":
        return el("label", { class: "bk-input" }, el("span", { class: "bk-input-label", html: plain(block.label) }),
          element(block.element || {}, surface));
      default:
        return el("div", { class: "bk-unsupported" }, `This message contains a ${block.type} block.`);
    }
  }

  function section(block, surface) {
    const main = el("div", { class: "bk-section-main" },
      block.text ? textObject(block.text, surface.viewer, "bk-section-text") : null,
      block.fields && block.fields.length
        ? el("div", { class: "bk-fields" }, block.fields.map((field) => el("div", { class: "bk-field" },
          textObject(field, surface.viewer))))
        : null);
    const accessory = block.accessory
      ? el("div", { class: "bk-accessory" },
        block.accessory.type === "image" ? image(block.accessory, "bk-accessory-image") : element(block.accessory, surface))
      : null;
    return el("div", { class: "bk-section" }, main, accessory);
  }

  function image(item, className) {
    const url = item.image_url || "";
    // Only images this page may load; anything on the internet shows its alt text instead.
    if (url.startsWith("data:") || url.startsWith("/")) {
      return el("img", { class: className, src: url, alt: item.alt_text || "" });
    }
    return el("span", { class: `${className} image-placeholder`, title: url }, `🖼 ${item.alt_text || "image"}`);
  }

  function richPart(part, surface) {
    const inline = (items) => (items || []).map((item) => {
      switch (item.type) {
        case "text": {
          const style = item.style || {};
          let node = el("span", {}, item.text);
          if (style.code) node = el("code", {}, node);
          if (style.bold) node = el("b", {}, node);
          if (style.italic) node = el("i", {}, node);
          if (style.strike) node = el("s", {}, node);
          return node;
        }
        case "link":
          return el("a", { href: item.url, target: "_blank", rel: "noopener" }, item.text || item.url);
        case "user":
          return el("span", { html: renderToken(`@${item.user_id}`, surface.viewer) });
        case "channel":
          return el("span", { html: renderToken(`#${item.channel_id}`, surface.viewer) });
        case "emoji":
          return EMOJI[item.name] || `:${item.name}:`;
        default:
          return "";
      }
    });
    switch (part.type) {
      case "rich_text_section":
        return el("div", {}, inline(part.elements));
      case "rich_text_quote":
        return el("div", { class: "quote" }, inline(part.elements));
      case "rich_text_preformatted":
        return el("pre", { class: "code-block" }, inline(part.elements));
      case "rich_text_list":
        return el(part.style === "ordered" ? "ol" : "ul", {},
          (part.elements || []).map((item) => el("li", {}, inline(item.elements))));
      default:
        return "";
    }
  }

  function element(item, surface) {
    switch (item.type) {
      case "button":
        return button(item, surface);
      case "static_select":
      case "external_select":
        return select(item, surface, optionsOf(item), item.initial_option && item.initial_option.value);
      case "users_select":
        return select(item, surface, store.workspace.people.map((p) => ({ value: p.id, label: p.name })),
          item.initial_user);
      case "conversations_select":
      case "channels_select":
        return select(item, surface,
          Object.entries(store.workspace.channels).map(([id, name]) => ({ value: id, label: `#${name}` })),
          item.initial_conversation || item.initial_channel);
      case "overflow":
        return overflow(item, surface);
      case "radio_buttons":
        return choices(item, surface, "radio");
      case "checkboxes":
        return choices(item, surface, "checkbox");
      case "datepicker": {
        const input = el("input", { type: "date", class: "bk-date", value: item.initial_date || "" });
        input.addEventListener("change", () => surface.act && surface.act(item.action_id, input.value, item, input));
        return input;
      }
      case "image":
        return image(item, "bk-element-image");
      default:
        return el("span", { class: "bk-unsupported" }, `[${item.type}]`);
    }
  }

  function optionsOf(item) {
    const flat = (options) => (options || []).map((o) => ({ value: o.value, label: plain(o.text) }));
    if (item.option_groups) {
      return item.option_groups.map((group) => ({ group: plain(group.label), options: flat(group.options) }));
    }
    return flat(item.options);
  }

  function button(item, surface) {
    const style = item.style ? ` ${item.style}` : "";
    const node = el("button", {
      type: "button",
      class: `bk-button${style}`,
      "data-action-id": item.action_id,
      // Block Kit's accessibility_label: what a screen reader says for a bare "Jane".
      "aria-label": item.accessibility_label || null,
      disabled: !surface.act,
      html: plain(item.text),
    });
    node.addEventListener("click", async () => {
      if (item.url) window.open(item.url, "_blank", "noopener");
      if (!surface.act) return;
      if (item.confirm && !(await confirmDialog(item.confirm, surface.viewer))) return;
      surface.act(item.action_id, null, item, node);
    });
    return node;
  }

  function select(item, surface, options, initial) {
    const node = el("select", { class: "bk-select", "data-action-id": item.action_id, disabled: !surface.act });
    node.append(el("option", { value: "", disabled: true, selected: !initial },
      item.placeholder ? item.placeholder.text : "Select an item"));
    const option = (o) => el("option", { value: o.value, selected: o.value === initial, html: o.label });
    for (const entry of options) {
      node.append(entry.group ? el("optgroup", { label: entry.group }, entry.options.map(option)) : option(entry));
    }
    let previous = node.value;
    node.addEventListener("change", async () => {
      if (item.confirm && !(await confirmDialog(item.confirm, surface.viewer))) {
        node.value = previous;
        return;
      }
      previous = node.value;
      surface.act(item.action_id, node.value, item, node);
    });
    return node;
  }

  function overflow(item, surface) {
    const menu = el("div", { class: "bk-overflow-menu", role: "menu" });
    const wrapper = el("div", { class: "bk-overflow" });
    const toggle = el("button", { type: "button", class: "bk-button bk-overflow-toggle", "aria-label": "More actions",
      "data-action-id": item.action_id, disabled: !surface.act }, "⋮");
    toggle.addEventListener("click", () => wrapper.classList.toggle("open"));
    for (const option of item.options || []) {
      const entry = el("button", { type: "button", role: "menuitem", html: plain(option.text) });
      entry.addEventListener("click", async () => {
        wrapper.classList.remove("open");
        if (item.confirm && !(await confirmDialog(item.confirm, surface.viewer))) return;
        surface.act(item.action_id, option.value, item, toggle);
      });
      menu.append(entry);
    }
    wrapper.append(toggle, menu);
    return wrapper;
  }

  function choices(item, surface, kind) {
    const name = `${item.action_id}-${Math.random().toString(36).slice(2)}`;
    const initial = kind === "radio"
      ? [item.initial_option && item.initial_option.value]
      : (item.initial_options || []).map((o) => o.value);
    const group = el("div", { class: `bk-choices ${kind}` });
    for (const option of item.options || []) {
      const input = el("input", { type: kind, name, value: option.value, checked: initial.includes(option.value),
        disabled: !surface.act });
      input.addEventListener("change", () => {
        const value = kind === "radio" ? input.value
          : [...group.querySelectorAll("input:checked")].map((box) => box.value);
        surface.act(item.action_id, value, item, input);
      });
      group.append(el("label", {}, input, el("span", { html: plain(option.text) })));
    }
    return group;
  }

  function confirmDialog(confirm, viewer) {
    return new Promise((resolve) => {
      const root = document.getElementById("dialog-root");
      const close = (answer) => {
        setChildren(root);
        document.removeEventListener("keydown", onKey);
        resolve(answer);
      };
      const onKey = (event) => event.key === "Escape" && close(false);
      const danger = confirm.style === "danger" ? " danger" : " primary";
      const yes = el("button", { type: "button", class: `bk-button${danger}`, onclick: () => close(true),
        html: plain(confirm.confirm) || "Yes" });
      const no = el("button", { type: "button", class: "bk-button", onclick: () => close(false),
        html: plain(confirm.deny) || "Cancel" });
      const dialog = el("div", { class: "dialog", role: "dialog", "aria-modal": "true", "aria-label": confirm.title ? confirm.title.text : "Are you sure?" },
        el("h2", { html: plain(confirm.title) || "Are you sure?" }),
        el("div", { class: "dialog-text" }, textObject(confirm.text, viewer)),
        el("div", { class: "dialog-buttons" }, no, yes));
      root.append(el("div", { class: "dialog-backdrop", onclick: (e) => e.target === e.currentTarget && close(false) }, dialog));
      document.addEventListener("keydown", onKey);
      yes.focus();
    });
  }

  // -- modals ---------------------------------------------------------------------------

  // A time of day ("15:00") as the reader's clock shows it: "3:00 PM" in en-US, "15:00" in sv.
  function showTime(hhmm, viewer) {
    const [hours, minutes] = hhmm.split(":").map(Number);
    return new Intl.DateTimeFormat(readerOf(viewer).locale, { hour: "numeric", minute: "2-digit", timeZone: "UTC" })
      .format(new Date(Date.UTC(2000, 0, 1, hours, minutes)));
  }

  // The times a time picker lists, every quarter of an hour: shown -> "HH:mm".
  function clockTimes(viewer) {
    const times = new Map();
    for (let quarter = 0; quarter < 96; quarter += 1) {
      const hhmm = `${String(Math.floor(quarter / 4)).padStart(2, "0")}:${String((quarter % 4) * 15).padStart(2, "0")}`;
      times.set(showTime(hhmm, viewer), hhmm);
    }
    return times;
  }

  // What was typed or picked, as the "HH:mm" Slack sends; null when it is no time of day.
  function readTime(text, times) {
    const typed = text.trim();
    if (times.has(typed)) return times.get(typed);
    const found = /^(\d{1,2})(?:[:.](\d{2}))?\s*([ap])?\.?\s*m?\.?$/i.exec(typed.replace(/[\u00a0\u202f]/g, " "));
    if (!found) return null;
    let hours = Number(found[1]);
    const minutes = Number(found[2] || 0);
    const half = (found[3] || "").toLowerCase();
    if (half && (hours < 1 || hours > 12)) return null;
    if (half === "a" && hours === 12) hours = 0;
    if (half === "p" && hours < 12) hours += 12;
    if (hours > 23 || minutes > 59) return null;
    return `${String(hours).padStart(2, "0")}:${String(minutes).padStart(2, "0")}`;
  }

  // One input block of a modal: its control, and how to read back what the person entered
  // in the shape the API takes (text, an option value, a list of them), or undefined to skip.
  function modalInput(block, viewer, serial) {
    const item = block.element || {};
    const id = `modal-input-${serial}`;
    const described = `${id}-hint ${id}-error`;
    let control;
    let read;
    switch (item.type) {
      case "plain_text_input":
      case "number_input":
      case "email_text_input":
      case "url_text_input": {
        const number = item.type === "number_input";
        const attributes = { id, class: "modal-control", "aria-describedby": described,
          placeholder: item.placeholder ? item.placeholder.text : null };
        control = item.multiline
          ? el("textarea", { ...attributes, rows: "4" })
          : el("input", { ...attributes,
            type: number ? "number" : { email_text_input: "email", url_text_input: "url" }[item.type] || "text",
            step: number ? (item.is_decimal_allowed ? "any" : "1") : null,
            min: number ? item.min_value : null,
            max: number ? item.max_value : null,
            inputmode: number ? (item.is_decimal_allowed ? "decimal" : "numeric") : null });
        control.value = item.initial_value || "";
        read = () => (control.value === "" ? null : control.value);
        break;
      }
      case "static_select":
      case "users_select": {
        const options = item.type === "users_select"
          ? store.workspace.people.map((p) => ({ value: p.id, label: escapeHtml(p.name) }))
          : optionsOf(item);
        const initial = item.type === "users_select" ? item.initial_user
          : item.initial_option && item.initial_option.value;
        control = el("select", { id, class: "modal-control", "aria-describedby": described });
        control.append(el("option", { value: "", selected: !initial },
          item.placeholder ? item.placeholder.text : "Select an item"));
        const option = (o) => el("option", { value: o.value, selected: o.value === initial, html: o.label });
        for (const entry of options) {
          control.append(entry.group ? el("optgroup", { label: entry.group }, entry.options.map(option)) : option(entry));
        }
        read = () => control.value || null;
        break;
      }
      case "checkboxes":
      case "radio_buttons": {
        const kind = item.type === "checkboxes" ? "checkbox" : "radio";
        const initial = kind === "radio" ? [item.initial_option && item.initial_option.value]
          : (item.initial_options || []).map((o) => o.value);
        control = el("div", { class: `modal-choices ${kind}`, role: kind === "radio" ? "radiogroup" : "group",
          "aria-labelledby": `${id}-label`, "aria-describedby": described });
        for (const option of item.options || []) {
          const box = el("input", { type: kind, name: id, value: option.value, checked: initial.includes(option.value) });
          control.append(el("label", { class: "modal-choice" }, box,
            el("span", {}, el("span", { html: plain(option.text) }),
              option.description ? el("span", { class: "modal-choice-note", html: plain(option.description) }) : null)));
        }
        read = () => {
          const picked = [...control.querySelectorAll("input:checked")].map((box) => box.value);
          return kind === "radio" ? picked[0] || null : picked;
        };
        break;
      }
      case "datepicker":
        control = el("input", { id, type: "date", class: "modal-control", value: item.initial_date || "",
          "aria-describedby": described });
        read = () => control.value || null;
        break;
      case "timepicker": {
        // Slack's desktop time picker: a list of times with free-text entry, its placeholder
        // shown while empty, and every time on the reader's own clock (3:00 PM, or 15:00).
        const times = clockTimes(viewer);
        const field = el("input", { id, type: "text", class: "modal-control", list: `${id}-times`, autocomplete: "off",
          placeholder: item.placeholder ? item.placeholder.text : null, "aria-describedby": described });
        field.value = item.initial_time ? showTime(item.initial_time, viewer) : "";
        control = el("div", { class: "modal-time" }, field,
          el("datalist", { id: `${id}-times` }, [...times.keys()].map((shown) => el("option", { value: shown }))));
        read = () => readTime(field.value, times);
        break;
      }
      default:
        control = el("span", { class: "bk-unsupported" }, `[${item.type}]`);
        read = () => undefined;
    }
    const grouped = item.type === "checkboxes" || item.type === "radio_buttons";
    const error = el("div", { class: "modal-error", id: `${id}-error`, hidden: true });
    const node = el("div", { class: "modal-input", "data-block-id": block.block_id },
      el(grouped ? "div" : "label", { class: "modal-label", id: `${id}-label`, for: grouped ? null : id },
        el("span", { html: plain(block.label) }), block.optional ? el("span", { class: "modal-optional" }, ` ${OPTIONAL[readerOf(viewer).language] || OPTIONAL.en}`) : null),
      control,
      block.hint ? el("div", { class: "modal-hint", id: `${id}-hint` }, textObject(block.hint, viewer)) : null,
      error);
    const showError = (text) => {
      error.textContent = text || "";
      error.hidden = !text;
      node.classList.toggle("invalid", Boolean(text));
      for (const field of node.querySelectorAll("input, select, textarea")) {
        if (text) field.setAttribute("aria-invalid", "true");
        else field.removeAttribute("aria-invalid");
      }
    };
    return { node, blockId: block.block_id, actionId: item.action_id, read, showError,
      focus: () => (node.querySelector("input, select, textarea") || control).focus() };
  }

  // A person's open modal, drawn over their client as Slack draws it. What they type stays
  // while the view is the same (id and hash); a views.update redraws it.
  class Modal {
    constructor(personId) {
      this.personId = personId;
      this.root = el("div", { class: "modal-layer", hidden: true });
      this.root.addEventListener("keydown", (event) => {
        if (event.key === "Escape") {
          event.stopPropagation();
          this.close();
        }
      });
      this.signature = null;
      this.busy = false;
    }

    render(view) {
      if (!view) {
        this.signature = null;
        this.root.hidden = true;
        setChildren(this.root);
        return;
      }
      const signature = `${view.id}:${view.hash}`;
      if (signature === this.signature) return;
      this.signature = signature;
      this.view = view;
      const viewer = this.personId;
      const titleId = `modal-title-${this.personId}`;
      this.inputs = [];
      const body = el("div", { class: "modal-body" }, (view.blocks || []).map((block) => {
        if (block.type !== "input") return renderBlock(block, new Surface(viewer, null));
        const input = modalInput(block, viewer, `${this.personId}-${this.inputs.length}`);
        this.inputs.push(input);
        return input.node;
      }));
      this.problem = el("div", { class: "modal-problem", role: "alert", hidden: true });
      this.submitButton = view.submit
        ? el("button", { type: "submit", class: "bk-button primary", html: plain(view.submit) }) : null;
      const closeText = view.close ? plain(view.close) : "Cancel";
      this.form = el("form", { class: "modal", role: "dialog", "aria-modal": "true", "aria-labelledby": titleId, novalidate: true },
        el("header", { class: "modal-head" },
          avatar(store.workspace.app.id, "tiny"),
          el("h2", { id: titleId, html: plain(view.title) }),
          el("button", { type: "button", class: "modal-x", "aria-label": "Close", onclick: () => this.close() }, "×")),
        this.problem,
        body,
        el("footer", { class: "modal-foot" },
          el("button", { type: "button", class: "bk-button", html: closeText, onclick: () => this.close() }),
          this.submitButton));
      this.form.addEventListener("submit", (event) => {
        event.preventDefault();
        this.submit();
      });
      setChildren(this.root, this.form);
      this.root.hidden = false;
      const first = this.inputs[0];
      if (first) first.focus();
    }

    values() {
      const values = {};
      for (const input of this.inputs) {
        const value = input.read();
        if (value === undefined) continue;
        (values[input.blockId] = values[input.blockId] || {})[input.actionId] = value;
      }
      return values;
    }

    showErrors(errors) {
      for (const input of this.inputs) input.showError(errors[input.blockId]);
      const known = new Set(this.inputs.map((input) => input.blockId));
      const other = Object.entries(errors).filter(([blockId]) => !known.has(blockId)).map(([, text]) => text);
      this.problem.textContent = other.join(" ");
      this.problem.hidden = !other.length;
      const invalid = this.inputs.find((input) => errors[input.blockId]);
      if (invalid) invalid.focus();
    }

    async submit() {
      if (this.busy) return;
      this.busy = true;
      if (this.submitButton) this.submitButton.classList.add("busy");
      try {
        const answer = await postJSON("/api/submit", { as: this.personId, view_id: this.view.id, values: this.values() });
        if (answer.errors && Object.keys(answer.errors).length) this.showErrors(answer.errors);
        else this.render(null); // closed; the next state confirms it
      } catch (error) {
        this.showErrors({ "": "We had some trouble connecting. Try again?" });
      } finally {
        this.busy = false;
        if (this.submitButton) this.submitButton.classList.remove("busy");
      }
    }

    async close() {
      const view = this.view;
      this.render(null);
      try {
        await postJSON("/api/close", { as: this.personId, view_id: view.id });
      } catch (_) {
        // Already closed (by the app, or another tab): nothing left to close.
      }
    }
  }

  // A click sent to the app: the control shows it is busy until the app has answered.
  async function pressing(control, path, body) {
    control.classList.add("busy");
    control.disabled = true;
    try {
      await postJSON(path, body);
    } catch (error) {
      const appFailed = error.answer && ["app_error", "app_unreachable"].includes(error.answer.error);
      toast(appFailed ? "Varulv didn't respond. Try again in a moment." : `That didn't work (${error.message}).`);
    } finally {
      control.classList.remove("busy");
      control.disabled = false;
    }
  }

  // -- one person's view of one conversation --------------------------------------------

  const INTROS = {
    channel: (name) => [
      el("div", { class: "intro-title" }, `# ${name}`),
      el("p", {}, "This is the very beginning of ", el("b", {}, `#${name}`),
        ". Everyone at the fika table is here. Type ", el("code", {}, "/varulv"),
        " below to set a table for one night of werewolf."),
    ],
    dm: () => [
      el("div", { class: "intro-title" }, "🐺 Varulv"),
      el("p", {}, "Varulv sends you your card here when a game starts, with your choices for the night. "
        + "Only you can see this conversation."),
    ],
  };

  function opensWithHeader(message) {
    return Boolean(message.blocks && message.blocks.length && message.blocks[0].type === "header");
  }

  class Pane {
    constructor(personId, compact) {
      this.personId = personId;
      this.compact = compact;
      this.nodes = new Map(); // ts -> { node, signature }
      this.shown = null;
      this.list = el("div", { class: "messages", role: "log", "aria-live": "polite" });
      this.header = el("header", { class: "pane-header" });
      this.footer = el("div", { class: "pane-footer" });
      this.root = el("section", { class: "pane", "data-person": personId }, this.header, this.list, this.footer);
      this.composer = this.buildComposer();
      this.modal = new Modal(personId);
    }

    get conversation() {
      return store.open[this.personId] || "channel";
    }

    render() {
      const state = store.states[this.personId];
      if (!state) return;
      const conversation = this.conversation;
      const switched = this.shown !== conversation;
      if (switched) {
        this.shown = conversation;
        this.nodes.clear();
        setChildren(this.list);
        this.renderHeader(state);
        this.renderFooter();
      }
      if (conversation === "home") {
        // A Home tab reads from the top, like a page; conversations from the newest message.
        this.renderHome(state);
        if (switched) this.list.scrollTop = 0;
      } else {
        const stick = switched || this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 60;
        this.renderMessages(conversation === "dm" ? state.dm.messages : state.channel.messages, conversation, state);
        if (stick) this.list.scrollTop = this.list.scrollHeight;
      }
      markSeen(this.personId, conversation);
      this.modal.render(state.modal);
    }

    renderHeader(state) {
      const conversation = this.conversation;
      const tabs = conversation === "channel" ? null : el("div", { class: "tabs", role: "tablist" },
        ["home", "dm"].map((tab) => el("button", {
          type: "button", role: "tab", class: "tab", "aria-selected": String(tab === conversation),
          onclick: () => openConversation(this.personId, tab),
        }, tab === "home" ? "Home" : "Messages")));
      const title = conversation === "channel"
        ? el("h2", {}, el("span", { class: "hash" }, "#"), state.channel.name)
        : el("h2", {}, el("span", { class: "app-mark" }, "🐺"), "Varulv", el("span", { class: "app-badge" }, "APP"));
      const members = conversation === "channel"
        ? el("span", { class: "members", title: "Members" }, `👥 ${store.workspace.people.length + 1}`) : null;
      setChildren(this.header, el("div", { class: "pane-title" }, title, members), tabs);
    }

    renderFooter() {
      if (this.conversation === "channel") {
        setChildren(this.footer, this.composer.form);
        this.composer.input.placeholder = `Message #${store.workspace.channel.name}`;
      } else if (this.conversation === "dm") {
        setChildren(this.footer, el("div", { class: "read-only" }, "Sending messages to this app has been turned off."));
      } else {
        setChildren(this.footer);
      }
    }

    renderHome(state) {
      const view = state.home;
      const signature = JSON.stringify(view);
      if (this.homeSignature === signature && this.list.childElementCount) return;
      this.homeSignature = signature;
      // Each block acts with its own block_id: a Home tab has one toggle per channel.
      const content = view
        ? el("div", { class: "home" }, el("div", { class: "blocks" }, (view.blocks || []).map((block) =>
          renderBlock(block, new Surface(this.personId, (actionId, value, item, control) =>
            this.actOnHome(block.block_id, actionId, control))))))
        : el("div", { class: "home empty" }, "Opening Varulv's Home…");
      setChildren(this.list, content);
    }

    actOnHome(blockId, actionId, control) {
      return pressing(control, "/api/home/act", { as: this.personId, block_id: blockId, action_id: actionId });
    }

    renderMessages(messages, conversation, state) {
      if (!this.list.firstChild || !this.list.firstChild.classList.contains("intro")) {
        this.list.prepend(el("div", { class: "intro" }, INTROS[conversation](state.channel.name)));
      }
      const keep = new Set(messages.map((m) => m.ts));
      for (const [ts, entry] of this.nodes) {
        if (!keep.has(ts)) {
          entry.node.remove();
          this.nodes.delete(ts);
        }
      }
      let previous = null;
      let anchor = this.list.firstChild; // the intro
      for (const message of messages) {
        const signature = JSON.stringify([message.text, message.blocks, message.ephemeral]);
        let entry = this.nodes.get(message.ts);
        if (!entry || entry.signature !== signature) {
          const node = this.renderMessage(message, conversation);
          if (entry) entry.node.replaceWith(node);
          entry = { node, signature };
          this.nodes.set(message.ts, entry);
        }
        if (anchor.nextSibling !== entry.node) anchor.after(entry.node);
        anchor = entry.node;
        // Slack's grouping (same sender, within five minutes), except that a message opening
        // with a header block (a new game's lobby or card, a new phase's board) starts anew.
        const continued = previous && previous.user === message.user && previous.ephemeral === message.ephemeral
          && !message.ephemeral && Number(message.ts) - Number(previous.ts) < 300 && !opensWithHeader(message);
        entry.node.classList.toggle("continued", Boolean(continued));
        previous = message;
      }
    }

    renderMessage(message, conversation) {
      const seconds = Number(message.ts);
      const act = message.from_app ? (actionId, value, item, control) =>
        this.act(conversation, message, actionId, value, control) : null;
      const surface = new Surface(this.personId, act);
      const content = message.blocks && message.blocks.length
        ? blocks(message.blocks, surface)
        : el("div", { class: "blocks" }, el("div", { class: "bk-section-text mrkdwn", html: mrkdwn(message.text, this.personId) }));
      const head = el("div", { class: "msg-head" },
        el("span", { class: "author" }, nameOf(message.user)),
        // An app's bot wears the APP badge; Slackbot is Slack's own and wears none.
        message.from_app ? el("span", { class: "app-badge" }, "APP") : null,
        el("time", { class: "msg-time", datetime: new Date(seconds * 1000).toISOString() }, clock(seconds, this.personId)));
      return el("article", {
        class: `msg${message.ephemeral ? " ephemeral" : ""}`,
        "data-ts": message.ts,
        "data-user": message.user,
      },
      message.ephemeral ? el("div", { class: "ephemeral-note" }, "👁 Only visible to you") : null,
      el("div", { class: "msg-row" },
        el("div", { class: "gutter" }, avatar(message.user), el("span", { class: "gutter-time" }, clock(seconds, this.personId))),
        el("div", { class: "msg-body" }, head, content)));
    }

    act(conversation, message, actionId, value, control) {
      const state = store.states[this.personId];
      const channel = conversation === "dm" ? state.dm.id : state.channel.id;
      return pressing(control, "/api/act", { as: this.personId, channel, ts: message.ts, action_id: actionId, value });
    }

    buildComposer() {
      const input = el("textarea", { class: "composer-input", rows: "1", "aria-label": "Message", spellcheck: "false" });
      const hint = el("div", { class: "command-hint", hidden: true });
      const sendButton = el("button", { type: "submit", class: "send", "aria-label": "Send" }, "➤");
      const form = el("form", { class: "composer" }, hint, el("div", { class: "composer-box" }, input, sendButton));
      const showHint = () => {
        const text = input.value;
        const command = store.workspace.command;
        const wanted = text.startsWith("/") && !text.includes(" ") && command.command.startsWith(text);
        hint.hidden = !wanted;
        if (wanted) {
          setChildren(hint, el("button", { type: "button", class: "command-option", onclick: () => {
            input.value = `${command.command} `;
            hint.hidden = true;
            input.focus();
          } }, el("b", {}, command.command), " ", el("span", { class: "usage" }, command.hint),
          el("span", { class: "description" }, command.description)));
        }
      };
      input.addEventListener("input", () => {
        showHint();
        input.style.height = "auto";
        input.style.height = `${Math.min(input.scrollHeight, 160)}px`;
      });
      input.addEventListener("keydown", (event) => {
        if (event.key === "Tab" && !hint.hidden) {
          event.preventDefault();
          input.value = `${store.workspace.command.command} `;
          hint.hidden = true;
        } else if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
          event.preventDefault();
          form.requestSubmit();
        }
      });
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        const text = input.value.trim();
        if (!text) return;
        const state = store.states[this.personId];
        const path = text.startsWith("/") ? "/api/command" : "/api/message";
        input.disabled = true;
        try {
          await postJSON(path, { as: this.personId, channel: state.channel.id, text });
          input.value = "";
          hint.hidden = true;
          input.style.height = "auto";
          this.list.scrollTop = this.list.scrollHeight;
        } catch (error) {
          if (error.message === "unknown_command") input.value = "";
          else if (error.answer && ["app_error", "app_unreachable"].includes(error.answer.error)) {
            toast("/varulv failed: Varulv didn't respond.");
          } else toast(`Couldn't send (${error.message}).`);
        } finally {
          input.disabled = false;
          input.focus();
        }
      });
      return { form, input };
    }
  }

  // -- navigation and unread counts -----------------------------------------------------

  function openConversation(personId, conversation) {
    store.open[personId] = conversation;
    if (conversation === "home" && !store.homeOpened[personId]) {
      // Slack tells the app each time the tab opens; once per visit is plenty here.
      store.homeOpened[personId] = true;
      postJSON("/api/home", { as: personId }).catch(() => toast("Varulv's Home didn't open."));
    }
    save();
    render();
    const pane = panes.get(personId);
    if (pane && conversation === "channel") pane.composer.input.focus();
  }

  function messagesOf(personId, conversation) {
    const state = store.states[personId];
    if (!state) return [];
    return conversation === "dm" ? state.dm.messages : state.channel.messages;
  }

  function markSeen(personId, conversation) {
    if (conversation === "home") return;
    const messages = messagesOf(personId, conversation);
    const seen = (store.seen[personId] = store.seen[personId] || {});
    const newest = messages.length ? messages[messages.length - 1].ts : undefined;
    if (newest && seen[conversation] !== newest) {
      seen[conversation] = newest;
      save();
    }
  }

  function unread(personId, conversation) {
    const since = Number((store.seen[personId] || {})[conversation] || 0);
    return messagesOf(personId, conversation).filter((m) => Number(m.ts) > since && m.user !== personId).length;
  }

  function badge(count) {
    return count ? el("span", { class: "badge", "aria-label": `${count} unread` }, String(count)) : null;
  }

  function save() {
    try {
      localStorage.setItem("varulv-sandbox",
        JSON.stringify({ me: store.me, view: store.view, open: store.open, seen: store.seen }));
    } catch (_) {
      // Private windows may refuse storage; the page works without it.
    }
  }

  function load() {
    try {
      const saved = JSON.parse(localStorage.getItem("varulv-sandbox") || "{}");
      if (saved.me && person(saved.me)) store.me = saved.me;
      if (saved.view === "everyone") store.view = "everyone";
      Object.assign(store.open, saved.open || {});
      // What each person has read survives a reload, as Slack remembers it.
      Object.assign(store.seen, saved.seen || {});
    } catch (_) {
      // Start fresh.
    }
  }

  // -- the page -------------------------------------------------------------------------

  // One chip per person, made once and then only updated: a chip replaced between the press
  // and the release of a click (a redraw as a message arrives) would lose that click.
  const chips = new Map();

  function renderPeople() {
    const nav = document.getElementById("people");
    if (!chips.size) {
      setChildren(nav, el("span", { class: "people-label" }, "Play as"),
        ...store.workspace.people.map((p) => {
          const chip = el("button", {
            type: "button",
            class: "person",
            "data-person": p.id,
            title: `Play as ${p.name}`,
            onclick: () => {
              // Same place, other eyes: switching person keeps the conversation on screen.
              if (store.view === "one" && p.id !== store.me) store.open[p.id] = store.open[store.me] || "channel";
              store.me = p.id;
              store.view = "one";
              save();
              render();
            },
          }, avatar(p.id, "small"), el("span", { class: "person-name" }, p.name));
          chips.set(p.id, chip);
          return chip;
        }));
    }
    for (const p of store.workspace.people) {
      const chip = chips.get(p.id);
      const active = store.view === "one" && p.id === store.me;
      const waiting = active ? 0 : unread(p.id, "dm") + unread(p.id, "channel");
      chip.classList.toggle("active", active);
      chip.setAttribute("aria-pressed", String(active));
      const dot = chip.querySelector(".dot");
      if (waiting && !dot) chip.append(el("span", { class: "dot" }));
      else if (!waiting && dot) dot.remove();
    }
    document.getElementById("view-one").setAttribute("aria-pressed", String(store.view === "one"));
    document.getElementById("view-everyone").setAttribute("aria-pressed", String(store.view === "everyone"));
  }

  // The conversations' buttons, made with their layout and then only updated, as the chips are.
  const navItems = [];

  function navItem(personId, conversation, label, icon) {
    const badgeSlot = el("span", { class: "nav-badge" });
    const button = el("button", {
      type: "button",
      class: "nav-item",
      "data-conversation": conversation,
      onclick: () => openConversation(personId, conversation),
    }, el("span", { class: "nav-icon" }, icon), el("span", { class: "nav-label" }, label), badgeSlot);
    navItems.push(() => {
      const open = store.open[personId];
      const active = open === conversation || (conversation === "dm" && open === "home")
        || (!open && conversation === "channel");
      button.classList.toggle("active", active);
      setChildren(badgeSlot, active ? null : badge(unread(personId, conversation)));
    });
    return button;
  }

  function paneFor(personId, compact) {
    let pane = panes.get(personId);
    if (!pane || pane.compact !== compact) {
      pane = new Pane(personId, compact);
      panes.set(personId, pane);
    }
    return pane;
  }

  let layout = null; // what the main area currently shows: "one:U…" or "everyone"

  function render() {
    if (!store.workspace) return;
    renderPeople();
    const main = document.getElementById("main");
    const wanted = store.view === "one" ? `one:${store.me}` : "everyone";
    if (layout !== wanted) {
      layout = wanted;
      panes.clear();
      navItems.length = 0;
      setChildren(main);
      main.className = `main ${store.view}`;
      if (store.view === "one") {
        const me = person(store.me);
        const pane = paneFor(store.me, false);
        const sidebar = el("aside", { class: "sidebar" },
          el("div", { class: "team" }, el("div", { class: "team-name" }, "Fika"),
            el("div", { class: "team-me" }, avatar(me.id, "tiny"), me.name)),
          el("div", { class: "nav-section" }, el("h3", {}, "Channels"),
            navItem(me.id, "channel", store.workspace.channel.name, "#")),
          el("div", { class: "nav-section" }, el("h3", {}, "Apps"), navItem(me.id, "dm", "Varulv", "🐺")),
          el("div", { class: "sidebar-note" }, "Switch person at the top to act as someone else; "
            + "“Everyone” shows all six side by side."));
        main.append(sidebar, pane.root, pane.modal.root);
        document.title = `${me.name} · Varulv sandbox`;
      } else {
        main.append(el("div", { class: "columns" }, store.workspace.people.map((p) => {
          const pane = paneFor(p.id, true);
          const head = el("div", { class: "column-head" },
            el("div", { class: "column-person" }, avatar(p.id, "small"), p.name),
            el("div", { class: "column-tabs" }, navItem(p.id, "channel", store.workspace.channel.name, "#"),
              navItem(p.id, "dm", "Varulv", "🐺")));
          return el("div", { class: "column", "data-person": p.id }, head, pane.root, pane.modal.root);
        })));
        document.title = "Everyone · Varulv sandbox";
      }
    }
    for (const update of navItems) update();
    for (const pane of panes.values()) pane.render();
  }

  async function start() {
    store.workspace = await getJSON("/api/workspace");
    store.me = store.workspace.people[0].id;
    load();
    for (const button of document.querySelectorAll(".view-switch button")) {
      button.addEventListener("click", () => {
        store.view = button.dataset.view;
        save();
        render();
      });
    }
    await refresh();
    follow();
  }

  start().catch((error) => {
    setChildren(document.getElementById("main"),
      el("p", { class: "loading" }, `The sandbox isn't answering (${error.message}). Is varulv still running?`));
  });
})();

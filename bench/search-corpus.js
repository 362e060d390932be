// Deterministic chat corpus for bench/search.js: one Slack channel of a platform
// engineering team. Same seed, same corpus, on every machine and Node version (the
// generator uses only a seeded PRNG, integer arithmetic and string concatenation).
//
//   makeCorpus(n, seed)     -> [{ id, ts, user, text }], oldest first; id === ts, ts strictly
//                              increasing Slack-style ("1780000000.000100"), text 40-300 chars
//   makeQueries(count, seed) -> ["why did the payments rollout get reverted last week", ...]
//   displayName(userId)     -> the user's display name (for events' `author`)
//
// What the texts look like:
//   - people talking (English sentence templates and a small grammar of subject / verb /
//     object / tail), bots posting deploy notices, alerts and CI results;
//   - Slack markup: <@U0ABC1234> mentions, <#C..|channel> links, <https://..|label> links,
//     :emoji:, `code spans`;
//   - ~10% non-English: German, French and Spanish (with accents) and Japanese;
//   - a Zipf-like word distribution: every slot draws from a list ranked by frequency
//     (weight 1/rank^s), so a few words are everywhere and most are rare;
//   - vocabulary that grows with N: pools of ~9,000 fixed identifiers (generated service
//     names like svc-ab12, hostnames, feature flags, project codenames) plus values made
//     on the fly (ticket numbers, commit SHAs, request ids, IPs, versions, PR numbers).
'use strict'

// ---------------------------------------------------------------- PRNG, samplers

/** mulberry32: 32-bit state, good enough statistically, identical everywhere. */
function mulberry32(seed) {
  let a = seed >>> 0
  return function rand() {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * A sampler over `items` ranked by frequency: item i has weight 1/(i+1)^s. Returns
 * `(rand) => item` (binary search over the cumulative weights).
 */
function zipf(items, s = 1.0) {
  const n = items.length
  const cdf = new Float64Array(n)
  let sum = 0
  for (let i = 0; i < n; i++) {
    sum += 1 / Math.pow(i + 1, s)
    cdf[i] = sum
  }
  for (let i = 0; i < n; i++) cdf[i] /= sum
  const sample = (rand) => {
    const u = rand()
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (cdf[mid] < u) lo = mid + 1
      else hi = mid
    }
    return items[lo]
  }
  sample.items = items
  return sample
}

const uniform = (items) => {
  const sample = (rand) => items[Math.floor(rand() * items.length)]
  sample.items = items
  return sample
}
const words = (s) => s.trim().split(/\s+/)
const lines = (s) =>
  s
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
const int = (rand, lo, hi) => lo + Math.floor(rand() * (hi - lo + 1))
const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789'
const HEX = '0123456789abcdef'
const UPPER_ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
function chars(rand, alphabet, len) {
  let s = ''
  for (let i = 0; i < len; i++) s += alphabet[Math.floor(rand() * alphabet.length)]
  return s
}

// ---------------------------------------------------------------- vocabulary
// Built once with a fixed seed: the same pools for every corpus and query set, so the
// queries share the corpus' vocabulary whatever the seeds.

const VOCAB_SEED = 0x0c0ffee
let VOCAB = null

function vocab() {
  if (VOCAB) return VOCAB
  const rand = mulberry32(VOCAB_SEED)
  const uniq = (make, count) => {
    const set = new Set()
    let guard = 0
    while (set.size < count && guard++ < count * 50) set.add(make())
    return [...set]
  }

  // Services: named ones first (the team talks about these all the time), then generated
  // ids (svc-ab12) and compound names for the long tail.
  const namedServices = words(`payments checkout auth billing search api-gateway ledger notifications orders
    inventory shipping catalog pricing identity sessions webhooks scheduler ingest pipeline fraud
    recommendations user-profile exports media thumbnails email-sender realtime presence graphql
    edge-proxy rate-limiter feature-flags config-service reporting risk refunds invoices
    kafka-connect cron-runner autoscaler log-shipper metrics-agent vault-agent dns-sync cdn-purger
    k8s-operator secrets-sync audit-log data-export sms push-gateway tax-engine`)
  const parts = words(`order pay user cart auth ledger event stream batch sync edge core data ml feed
    geo mail doc file img vid chat bill tax risk rank match quote promo loyalty wallet fx kyc ship`)
  const suffixes = words('api svc worker consumer gateway service indexer router writer reader proxy cron')
  const genServices = uniq(() => (rand() < 0.55 ? `svc-${chars(rand, 'abcdefghijklmnopqrstuvwxyz', 2)}${int(rand, 10, 99)}` : `${parts[int(rand, 0, parts.length - 1)]}-${suffixes[int(rand, 0, suffixes.length - 1)]}${rand() < 0.3 ? `-v${int(rand, 2, 4)}` : ''}`), 2200)
  const services = [...namedServices, ...genServices.filter((s) => !namedServices.includes(s))]

  const roles = words('web api db pg redis kafka es worker batch edge ingress cache mq zk etcd gpu build runner')
  const regions = words('use1 use2 usw2 euw1 euc1 apse1 apne1')
  const hosts = uniq(() => `${roles[int(rand, 0, roles.length - 1)]}-${String(int(rand, 1, 60)).padStart(2, '0')}.${regions[int(rand, 0, regions.length - 1)]}`, 1800)

  const flagVerbs = words('enable use disable allow skip force new legacy experimental')
  const flagNouns = words(`checkout flow pgbouncer pool retries cache warmup batching v2 api search ranking
    dark mode async writes shadow traffic canary routing grpc http2 compression tls13 rate limit
    backfill dedupe fanout prefetch lazy loading sharding read replicas circuit breaker kafka idempotency`)
  const flags = uniq(() => {
    const n = int(rand, 2, 3)
    let f = flagVerbs[int(rand, 0, flagVerbs.length - 1)]
    for (let i = 0; i < n; i++) f += `_${flagNouns[int(rand, 0, flagNouns.length - 1)]}`
    return f
  }, 900)

  // Project codenames, jargon, typos: pronounceable pseudo-words.
  const syll = words('ka lo mi zen tor vex ra qui bel dor fa gri hal jin ko lum nar os pel quo ris sol tam ur vin wex yo zul ae bri cas dru')
  const codenames = uniq(() => {
    const n = rand() < 0.6 ? 2 : 3
    let w = ''
    for (let i = 0; i < n; i++) w += syll[int(rand, 0, syll.length - 1)]
    return w
  }, 3500)

  const first = words(`Alice Bob Priya Wei Yuki Hiroshi Lena Jürgen François Sofía José Mateo Amara Olu Sven Ingrid
    Chen Fatima Omar Dmitri Aleksandra Carlos Maria Ana Luis Kenji Sakura Haruto Noah Emma Liam Olivia
    Raj Ananya Arjun Mei Jin Tomás Lucía Élodie Camille Théo Zoë Björn Astrid Kwame Ade Nia Tariq Leila
    Marco Giulia Pavel Olga Nikolai Sara David Rachel Ben Tom Kate Sam Alex Jordan Taylor Morgan Chris`)
  const last = words('S. K. M. R. T. L. N. P. W. G. B. D. H. O. V. Z.')
  const bots = ['deploybot', 'pagerduty', 'grafana', 'ci-bot', 'dependabot', 'statuspage']
  const users = []
  const names = new Map()
  const usedNames = new Set()
  for (let i = 0; i < 160; i++) {
    let id
    do id = `U0${chars(rand, UPPER_ALNUM, 7)}`
    while (names.has(id))
    let name = first[i % first.length]
    if (usedNames.has(name)) name = `${name} ${last[int(rand, 0, last.length - 1)]}`
    if (usedNames.has(name)) name = `${name}${i}`
    usedNames.add(name)
    names.set(id, name)
    users.push(id)
  }
  const botIds = []
  for (const b of bots) {
    const id = `B0${chars(rand, UPPER_ALNUM, 7)}`
    names.set(id, b)
    botIds.push(id)
  }

  // English, ranked roughly by how often a platform team's chat uses them.
  const nounsRanked = words(`deploy prod rollout build alert staging canary release migration incident pr config
    pipeline dashboard latency errors logs pods cluster traffic flag replica database cert runbook
    postmortem test tests job queue node disk memory cpu cache index schema backup load balancer dns
    on-call page ticket branch image container helm chart terraform plan apply lock secret token quota
    throughput error-rate timeout retry outage fix patch hotfix revert rollback freeze window sprint
    review spike ticket doc spreadsheet thread metrics graph p99 p95 p50 ingress egress vpc subnet
    gateway proxy sidecar mesh envoy nginx webhook cron batch stream topic partition consumer producer
    offset lag shard leader follower failover snapshot wal vacuum bloat autovacuum connection pool
    handshake certificate expiry budget slo sli sla burn rate capacity region zone az upgrade
    downgrade dependency vulnerability cve scan audit permission role policy iam bucket object
    lifecycle retention ttl eviction hit miss ratio histogram counter gauge trace span sampling
    flamegraph profile heap leak gc pause thread pool goroutine deadlock race condition regression
    benchmark baseline alerting threshold paging escalation handoff standup retro roadmap okr`)
  const verbsRanked = words(`deployed merged reverted rolled-back bumped restarted fixed broke checked paged
    scaled upgraded migrated patched disabled enabled rotated drained investigated approved pushed
    cut tagged promoted cordoned resized reindexed vacuumed backfilled throttled retried flushed purged
    rebased squashed pinned unpinned silenced acked resolved escalated reproduced bisected profiled`)
  const adjectives = words(`new old flaky broken slow stale green red noisy weird expected elevated degraded
    healthy stuck pending failing intermittent partial full hot cold blue-green shadow primary
    secondary legacy deprecated internal external critical minor major urgent`)
  const tails = lines(`
    in prod
    on staging
    last night
    this morning
    again
    just now
    earlier today
    yesterday
    since the weekend
    before the freeze
    after lunch
    for now
    until further notice
    over the weekend
    during the incident
    right after the deploy
    as discussed in standup
    per the runbook
    once CI is green
    behind the flag
    in us-east-1
    in eu-west-1
    on the canary
    for the demo
    before EOD`)
  const openers = lines(`
    hey
    fyi
    heads up:
    ok so
    quick q:
    PSA:
    update:
    hmm
    ugh
    lol
    so
    btw
    +1,
    nvm,
    morning!
    thanks!
    ty,
    yeah
    not sure but
    correction:`)
  const closers = lines(`
    thoughts?
    will update here
    see thread
    any objections?
    lmk
    :pray:
    :eyes:
    :rocket:
    :fire:
    :white_check_mark:
    :+1:
    :thinking_face:
    :sweat_smile:
    :tada:
    :rotating_light:
    :shipit:
    :facepalm:
    (will ping again later)
    if that's ok
    cc the team`)
  const errors = lines(`
    OOMKilled
    CrashLoopBackOff
    502s
    503s
    504 gateway timeouts
    connection resets
    ECONNREFUSED
    TLS handshake timeout
    deadlocks
    replication lag
    disk pressure
    NullPointerException
    context deadline exceeded
    too many open files
    ImagePullBackOff
    5xx spike
    slow queries
    lock contention
    certificate has expired
    DNS resolution failures
    segfault in the worker
    readiness probe failures
    consumer lag`)
  const dbs = words('postgres redis kafka elasticsearch mysql clickhouse dynamodb cassandra etcd s3 bigquery snowflake rabbitmq memcached')
  const tables = words('users orders payments invoices sessions events audit_log line_items refunds accounts subscriptions carts products prices webhooks jobs outbox ledger_entries')
  const envs = words('prod staging canary dev preprod sandbox qa')
  const channels = words('incidents deploys platform-eng oncall releases sre-alerts db-team payments-eng random infra-changes')
  const metrics = words(`http_requests_total error_rate p99_latency p95_latency cpu_usage memory_rss gc_pause_ms
    queue_depth consumer_lag replication_lag_seconds connection_count disk_used_pct apdex cache_hit_ratio
    request_duration_seconds pod_restarts saturation throughput_rps`)
  const projects = words('OPS INC PLAT SRE PAY SEC DATA INFRA CORE BILL')
  const emoji = words(':rocket: :eyes: :fire: :white_check_mark: :+1: :tada: :pray: :thinking_face: :rotating_light: :warning: :x: :heavy_check_mark: :sob: :100: :sweat_smile: :shipit: :bug: :hourglass: :wave: :coffee:')
  const weekdays = words('Monday Tuesday Wednesday Thursday Friday')

  // ------------------------------------------------ non-English material
  const de = {
    lines: lines(`
      Der Rollout von {svc} ist fehlgeschlagen, ich prüfe gerade die Logs auf {host}.
      Kann jemand bitte {ticket} übernehmen? Ich bin ab morgen im Urlaub.
      Die Migration der Tabelle {table} dauert länger als geplant, bitte nichts deployen.
      Wir haben die Latenz von {svc} um {pct} reduziert, schöne Arbeit!
      Achtung: Wartungsfenster für {db} heute um {time} Uhr.
      Ich habe den Fehler reproduziert, er tritt nur auf {env} auf.
      Warum ist der Build schon wieder rot? Sieht nach einem flaky Test aus.
      Das Zertifikat für {svc} läuft nächste Woche ab, wer kümmert sich darum?
      Bitte überprüft die Änderungen an {flag} vor dem Release {ver}.
      Die Überwachung zeigt erhöhte Fehlerraten seit dem letzten Deployment.
      Ich schaue mir das nach der Mittagspause genauer an.
      Größere Änderungen bitte erst nach dem Freeze, danke!
      Kurze Frage: läuft {svc} schon auf der neuen Version?
      Für {ticket} brauchen wir noch eine Freigabe von {person}.
      Der Speicherverbrauch auf {host} steigt kontinuierlich, vermutlich ein Leck.`),
  }
  const fr = {
    lines: lines(`
      Est-ce que quelqu'un peut vérifier la réplique {db} ? La latence a augmenté après le déploiement.
      Le déploiement de {svc} en {env} est terminé, tout a l'air stable.
      J'ai relancé le job de migration, ça devrait être réglé d'ici une heure.
      Attention : mise à jour de {db} prévue demain à {time}, prévoyez une coupure.
      Le certificat de {svc} expire bientôt, il faut le renouveler.
      Je regarde {ticket} cet après-midi, désolé pour le délai.
      Les erreurs {err} sur {host} ont disparu après le redémarrage.
      On a désactivé le flag {flag} en attendant le correctif.
      Qui est d'astreinte cette semaine ? J'ai une question sur {svc}.
      La requête sur la table {table} est très lente depuis la dernière version {ver}.
      Merci à {person} pour le post-mortem, très clair et détaillé.
      Problème résolu, c'était une mauvaise configuration du load balancer.
      Je propose qu'on annule la mise en production de vendredi.`),
  }
  const es = {
    lines: lines(`
      ¿Alguien sabe por qué falló la migración de {svc}? Revisé los índices y todo parece bien.
      El despliegue de {svc} a {env} terminó sin errores :tada:
      Estoy revisando los logs de {host}, parece un problema de memoria.
      Mañana a las {time} hay mantenimiento de {db}, por favor no desplieguen.
      La latencia de {svc} subió un {pct} después de la versión {ver}.
      ¿Quién está de guardia esta semana? Necesito ayuda con {ticket}.
      Desactivé el flag {flag} hasta que tengamos la corrección.
      Gracias {person}, la solución funcionó perfectamente.
      El certificado de {svc} caduca el próximo {weekday}, ¿quién se encarga?
      Hay errores intermitentes de conexión con la réplica de {db}.
      Acabo de revertir el último cambio, el pipeline está en verde otra vez.
      Perdón por el ruido, fue una falsa alarma.`),
  }
  const ja = {
    lines: lines(`
      {svc} のデプロイが失敗しました。ロールバックします。
      本番環境でレイテンシが上がっています :eyes:
      {host} のディスク使用率が 90% を超えました。確認お願いします。
      {ticket} の対応ありがとうございます！助かりました。
      明日 {time} から {db} のメンテナンスがあります。デプロイは控えてください。
      ステージングで再現できました。原因を調査中です。
      {flag} フラグを無効にしました。修正が入るまでこのままにします。
      カナリアリリースは問題なさそうです。本番に展開します :rocket:
      証明書の期限が近いので更新をお願いします。
      障害の振り返りは金曜日に行います。議事録は後で共有します。
      {svc} のエラー率が上昇しています。{err} が原因のようです。
      マイグレーション完了しました。お疲れ様でした！
      バージョン {ver} にアップデートしました。`),
  }

  VOCAB = {
    services: zipf(services, 1.05),
    namedServices,
    hosts: zipf(hosts, 0.9),
    flags: zipf(flags, 0.95),
    codenames: zipf(codenames, 0.9),
    users: zipf(users, 1.1),
    userIds: users,
    bots: botIds,
    names,
    people: zipf(users.map((u) => names.get(u)), 1.1),
    nouns: zipf(nounsRanked, 1.0),
    verbs: zipf(verbsRanked, 1.0),
    adjectives: zipf(adjectives, 1.0),
    tails: zipf(tails, 0.8),
    openers: zipf(openers, 0.9),
    closers: zipf(closers, 0.9),
    errors: zipf(errors, 1.0),
    dbs: zipf(dbs, 1.1),
    tables: zipf(tables, 1.0),
    envs: zipf(envs, 1.3),
    channels: zipf(channels, 1.0),
    metrics: zipf(metrics, 1.0),
    projects: zipf(projects, 1.0),
    emoji: zipf(emoji, 1.0),
    weekdays: uniform(weekdays),
    regions: uniform(regions),
    de: uniform(de.lines),
    fr: uniform(fr.lines),
    es: uniform(es.lines),
    ja: uniform(ja.lines),
  }
  return VOCAB
}

// ---------------------------------------------------------------- slot values

function slot(name, rand, V) {
  switch (name) {
    case 'svc':
      return V.services(rand)
    case 'host':
      return rand() < 0.85 ? V.hosts(rand) : `ip-10-${int(rand, 0, 255)}-${int(rand, 0, 255)}-${int(rand, 1, 254)}`
    case 'flag':
      return V.flags(rand)
    case 'codename':
      return V.codenames(rand)
    case 'person':
      return V.people(rand)
    case 'mention':
      return `<@${V.users(rand)}>`
    case 'ticket':
      // Recent tickets are talked about more: a skewed number in a growing range.
      return `${V.projects(rand)}-${Math.floor(Math.pow(rand(), 2.5) * 9000) + 100}`
    case 'inc':
      return `INC-${Math.floor(Math.pow(rand(), 2) * 3000) + 1}`
    case 'pr':
      return `#${int(rand, 1000, 29999)}`
    case 'sha':
      return chars(rand, HEX, 7)
    case 'req':
      return `req_${chars(rand, ALNUM, 12)}`
    case 'ver':
      return `v${int(rand, 1, 4)}.${int(rand, 0, 30)}.${int(rand, 0, 12)}`
    case 'num':
      return String(rand() < 0.7 ? int(rand, 2, 99) : int(rand, 100, 5000))
    case 'ms':
      return `${int(rand, 20, 4000)}ms`
    case 'pct':
      return `${int(rand, 1, 99)}%`
    case 'time':
      return `${int(rand, 8, 22)}:${rand() < 0.5 ? '00' : '30'}`
    case 'err':
      return V.errors(rand)
    case 'db':
      return V.dbs(rand)
    case 'table':
      return V.tables(rand)
    case 'env':
      return V.envs(rand)
    case 'metric':
      return V.metrics(rand)
    case 'channel':
      return `<#C0${chars(rand, UPPER_ALNUM, 7)}|${V.channels(rand)}>`
    case 'link':
      return `<https://grafana.internal/d/${chars(rand, ALNUM, 8)}|dashboard>`
    case 'doc':
      return `<https://docs.internal/${V.codenames(rand)}/${chars(rand, ALNUM, 6)}|doc>`
    case 'noun':
      return V.nouns(rand)
    case 'verb':
      return V.verbs(rand).replace('-', ' ')
    case 'adj':
      return V.adjectives(rand)
    case 'tail':
      return V.tails(rand)
    case 'emoji':
      return V.emoji(rand)
    case 'weekday':
      return V.weekdays(rand)
    case 'region':
      return V.regions(rand)
    default:
      throw new Error(`unknown slot {${name}}`)
  }
}

/** Compiles "text {slot} text" into [literal, slot, literal, ...] once. */
function compile(template) {
  const parts = template.split(/\{(\w+)\}/)
  return (rand, V) => {
    let s = parts[0]
    for (let i = 1; i < parts.length; i += 2) s += slot(parts[i], rand, V) + parts[i + 1]
    return s
  }
}

// ---------------------------------------------------------------- English sentences

// Ranked: the first templates are the everyday ones.
const EN_TEMPLATES = lines(`
  deploying {svc} {ver} to {env} now
  {svc} p99 latency is up to {ms} since the {ver} rollout
  can you take a look at {ticket}? {svc} is throwing {err} on {host}
  rolling back {svc} to {ver}, the {flag} flag was causing {err}
  anyone know why {metric} dropped on {host}?
  lgtm, ship it
  {ticket} is done, merged in {pr}
  who is on call for {svc} this week?
  the {db} replica on {host} is lagging behind by {num} seconds
  canary for {svc} looks good, promoting to 100%
  build is red again, looks like a flaky test in {svc}
  {person} is out today, I'm covering the {svc} review
  incident {inc} resolved, postmortem doc incoming {doc}
  reminder: change freeze starts {weekday} at {time} UTC
  the migration on {table} is still running, {pct} done
  enabled {flag} for {pct} of traffic in {region}
  {svc} pods are {err} after the {ver} upgrade, investigating
  opened {ticket} to track the {err} on {host}
  is anyone else seeing {err} from {svc} in {env}?
  reverted {sha} because it broke {svc} in {env}
  pagerduty fired for {svc}: {metric} above threshold for {num} minutes
  {codename} migration is blocked on {ticket}
  the {codename} rollout plan is in {doc}
  I'll pair with {person} on the {codename} cutover after standup
  can someone approve {pr}? it's a one-line fix for {ticket}
  the cert for {svc} expires in {num} days, rotating it today
  scaling {svc} from {num} to {num} replicas for the load test
  {db} connection pool is exhausted on {host}, bumping max connections
  request {req} failed with {err} at {svc}, trace in {link}
  rotating the {svc} API keys, expect a few {err} during the switch
  the {svc} dashboard is here {link}
  what's the rollback plan if the {svc} release goes sideways?
  why did the {svc} rollout get reverted last week?
  we need to backfill {table} after the {codename} migration
  heads up, {svc} will be read-only for ~{num} minutes during the {db} failover
  moved the {flag} flag to 50% and nothing exploded
  the {svc} deploy pipeline is stuck on the integration tests again
  I think {sha} introduced the regression in {svc}, bisecting now
  {env} is broken, please don't merge anything into main until {ticket} is fixed
  the {metric} alert for {svc} is too noisy, proposing a new threshold in {pr}
  {host} is being drained for the kernel upgrade
  the retro for {inc} is on {weekday}, please add notes to {doc}
  {svc} and {svc} both depend on the {codename} library, upgrading it to {ver}
  load balancer health checks failing for {svc} in {region}
  do we have a runbook for {err} on {db}?
  ok, {svc} {ver} is live in {env} :rocket:`).map(compile)

// A small grammar for everyday chatter: subject verb object tail.
const SUBJECTS = lines(`
  I
  we
  {person}
  {mention}
  someone
  the on-call
  ci
  the team
  they`)
const OBJECTS = lines(`
  the {svc} deploy
  the {noun}
  the {adj} {noun}
  {svc}
  the {flag} flag
  {ticket}
  {pr}
  the {db} replica
  the {noun} for {svc}
  the {codename} {noun}
  {host}
  the {adj} {noun} on {host}
  {svc} {ver}`)
const S_SUBJ = zipf(SUBJECTS.map(compile), 1.0)
const S_OBJ = zipf(OBJECTS.map(compile), 0.8)
const S_EN = zipf(EN_TEMPLATES, 0.6)

function chatter(rand, V) {
  let s = `${S_SUBJ(rand)(rand, V)} ${slot('verb', rand, V)} ${S_OBJ(rand)(rand, V)}`
  if (rand() < 0.6) s += ` ${V.tails(rand)}`
  return s
}

function englishSentence(rand, V) {
  return rand() < 0.55 ? S_EN(rand)(rand, V) : chatter(rand, V)
}

// Bots post structured notices.
const BOT_TEMPLATES = [
  compile('Deploy of *{svc}* {ver} to {env} succeeded :white_check_mark: (build {pr}, commit {sha}, {num}s)'),
  compile('Deploy of *{svc}* {ver} to {env} FAILED :x: step `helm upgrade` exited 1, commit {sha}'),
  compile('[FIRING:{num}] {metric} high on {svc} ({host}) severity=page runbook={doc}'),
  compile('[RESOLVED] {metric} on {svc} ({host}) after {num}m'),
  compile('Incident {inc} opened: {svc} {err} in {region}. Incident commander: {mention}'),
  compile('Bump {codename} from {ver} to {ver} in {svc} ({pr})'),
  compile('CI: main is red, {num} failing tests in {svc} (commit {sha}) {link}'),
  compile('Status: degraded performance for {svc}, investigating. Updates in {channel}'),
]
const S_BOT = zipf(BOT_TEMPLATES, 0.7)

// Japanese/German/French/Spanish lines use slots too.
const FOREIGN = ['de', 'fr', 'es', 'ja']
const FOREIGN_COMPILED = new Map()
function foreignSentence(lang, rand, V) {
  const line = V[lang](rand)
  let f = FOREIGN_COMPILED.get(line)
  if (!f) FOREIGN_COMPILED.set(line, (f = compile(line)))
  return f(rand, V)
}

// ---------------------------------------------------------------- messages

const MIN_LEN = 40
const MAX_LEN = 300

function cut(text) {
  if (text.length <= MAX_LEN) return text
  let i = text.lastIndexOf(' ', MAX_LEN)
  if (i < MIN_LEN) i = MAX_LEN
  let s = text.slice(0, i)
  // Never leave half a surrogate pair or an unclosed Slack <...> token.
  const c = s.charCodeAt(s.length - 1)
  if (c >= 0xd800 && c <= 0xdbff) s = s.slice(0, -1)
  const open = s.lastIndexOf('<')
  if (open > s.lastIndexOf('>') && open >= MIN_LEN) s = s.slice(0, open).trimEnd()
  return s
}

function messageText(rand, V, isBot) {
  if (isBot) {
    let s = S_BOT(rand)(rand, V)
    while (s.length < MIN_LEN) s += ` ${V.emoji(rand)}`
    return cut(s)
  }
  const r = rand()
  // ~10% non-English: de 3%, fr 2.5%, es 2.5%, ja 2%.
  const lang = r < 0.9 ? 'en' : r < 0.93 ? 'de' : r < 0.955 ? 'fr' : r < 0.98 ? 'es' : 'ja'
  const sentence = lang === 'en' ? () => englishSentence(rand, V) : () => foreignSentence(lang, rand, V)
  // Sentence count: mostly one or two, sometimes a paragraph.
  const q = rand()
  const count = q < 0.45 ? 1 : q < 0.78 ? 2 : q < 0.94 ? 3 : 4
  let s = ''
  if (lang === 'en' && rand() < 0.25) s = `${V.openers(rand)} `
  for (let i = 0; i < count || s.length < MIN_LEN; i++) {
    let t = sentence()
    if (lang === 'en') {
      if (rand() < 0.5 && (i > 0 || s === '')) t = t[0].toUpperCase() + t.slice(1)
      // Chat punctuation is sloppy: most sentences get a full stop, some nothing.
      if ((i + 1 < count || rand() < 0.4) && !/[.?!:)>]$/.test(t)) t += rand() < 0.7 ? '.' : rand() < 0.5 ? ',' : ''
    }
    s += i === 0 ? t : (lang === 'ja' ? '' : rand() < 0.15 ? '\n' : ' ') + t
  }
  if (rand() < 0.3) s += ` ${V.closers(rand)}`
  else if (rand() < 0.08) s += ` cc ${slot('mention', rand, V)}`
  return cut(s)
}

const T0_US = 1780000000 * 1e6 + 100 // "1780000000.000100"

/**
 * `n` messages of one channel, oldest first: `{ id, ts, user, text }` with `id === ts`.
 * Gaps between messages are bursty (a few seconds inside a conversation, minutes to hours
 * between them); ts is strictly increasing.
 */
function makeCorpus(n, seed = 1) {
  const V = vocab()
  const rand = mulberry32(seed)
  const out = new Array(n)
  let t = T0_US
  for (let i = 0; i < n; i++) {
    const isBot = rand() < 0.12
    const user = isBot ? V.bots[Math.floor(rand() * V.bots.length)] : V.users(rand)
    const ts = `${Math.floor(t / 1e6)}.${String(t % 1e6).padStart(6, '0')}`
    out[i] = { id: ts, ts, user, text: messageText(rand, V, isBot) }
    const g = rand()
    const gapSec = g < 0.6 ? 1 + rand() * 30 : g < 0.95 ? 30 + rand() * 600 : 600 + rand() * 7200
    t += 1 + Math.floor(gapSec * 1e6)
  }
  return out
}

/** The display name of a corpus `user` id (people and bots). */
function displayName(userId) {
  return vocab().names.get(userId) ?? userId
}

// ---------------------------------------------------------------- queries

// Intents as an agent would phrase them for channel search: 3-10 words.
const Q_NATURAL = lines(`
  why did the {svc} rollout get reverted last week
  who approved the {flag} flag change
  what caused the {err} on {svc}
  when is the next {svc} deploy to prod
  errors on {svc} after the {ver} upgrade
  latency regression in {svc} p99
  status of the {db} replica migration
  did anyone fix the flaky {svc} tests
  who is on call for {svc}
  rollback plan for the {svc} release
  {svc} cert expiry and rotation
  postmortem for the {svc} outage
  is {flag} enabled in prod
  {db} connection pool exhausted on {svc}
  why is the {table} migration so slow
  canary results for {svc} {ver}
  alerts firing for {metric} on {svc}
  decision about the {codename} cutover date
  who owns the {svc} dashboard`)
const Q_RARE = lines(`
  any update on {ticket}
  what happened on {host} yesterday
  who is working on {ticket} for {svc}
  commit {sha} broke the build
  what is the {codename} migration plan
  {codename} rollout status and blockers
  errors from {host} after the restart
  request {req} failed with an error
  is {flag} safe to turn on
  discussion about {pr} review`)
const Q_COMMON = lines(`
  deploy failed again in prod
  who is on call this week
  is staging broken right now
  what is the rollback plan
  latest incident postmortem and action items
  why is the build red
  when does the change freeze start
  any alerts firing right now
  database migration status update
  what did we decide about the release`)
const Q_FOREIGN = lines(`
  warum ist der Rollout von {svc} fehlgeschlagen
  Überwachung Fehlerraten nach dem Deployment
  wer kümmert sich um das Zertifikat für {svc}
  pourquoi la migration de {svc} a échoué
  latence de la réplique {db} après le déploiement
  qui est d'astreinte cette semaine
  por qué falló la migración de {svc}
  quién está de guardia esta semana
  latencia de {svc} después de la versión
  {svc} のデプロイ 失敗 ロールバック
  本番環境 レイテンシ 上昇 原因
  証明書 期限 更新 {svc}`)
const Q_SETS = [
  [0.4, Q_NATURAL.map(compile)],
  [0.25, Q_RARE.map(compile)],
  [0.2, Q_COMMON.map(compile)],
  [0.15, Q_FOREIGN.map(compile)],
]

/**
 * `count` search intents: ~40% natural questions around a service/flag/table, ~25% with a
 * rare identifier (ticket, host, sha, codename, request id), ~20% only common words, ~15%
 * German/French/Spanish/Japanese. Each has 3-10 whitespace-separated words.
 */
function makeQueries(count, seed = 2) {
  const V = vocab()
  const rand = mulberry32(seed)
  const out = []
  while (out.length < count) {
    let r = rand()
    let set = Q_SETS[Q_SETS.length - 1][1]
    for (const [p, s] of Q_SETS) {
      if (r < p) {
        set = s
        break
      }
      r -= p
    }
    const q = set[Math.floor(rand() * set.length)](rand, V)
    const n = q.split(/\s+/).length
    if (n >= 3 && n <= 10) out.push(q)
  }
  return out
}

module.exports = { makeCorpus, makeQueries, displayName, mulberry32, zipf }

"""Generate ``true_secrets.jsonl``: fake secrets of every class and spelling the scanner refuses,
each inside realistic text (a chat line, a note, a config snippet, a stack trace), plus variants
split by zero-width characters and spelled in fullwidth forms.

Every secret is random, drawn from a fixed seed: none is, or was ever, a real credential. Run
``python tests/security/secrets_corpus/generate.py`` to rewrite the file; the output is the same
on every run. Each line is a JSON object ``{"class", "spelling", "variant", "text", "secret"}``:
``class`` is the class the scanner reports for ``text``, ``secret`` the secret inside it (as the
text spells it). In the file, the third character of every secret
is written as a ``\\uXXXX`` escape (the JSON string is unchanged), so that a repository's secret
scanner, which reads the raw bytes, does not mistake the corpus for leaked keys.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).with_name("true_secrets.jsonl")
SEED = 20261203

rng = random.Random(SEED)

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + "234567"
B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
SYMBOLS = "!@#%^*+=?~"


def run(alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def mixed(alphabet: str, n: int) -> str:
    """A random run that holds a digit, a capital and a small letter (as real keys of that length do)."""
    while True:
        value = run(alphabet, n)
        classes = (str.isdigit, str.isupper, str.islower)
        if all(any(test(c) for c in value) for test in classes) and "xxxx" not in value.lower():
            return value


def password() -> str:
    """A human-chosen-looking password: letters, digits and a symbol, 10 to 20 characters."""
    n = rng.randint(10, 20)
    chars = [rng.choice(string.ascii_lowercase) for _ in range(n - 3)]
    chars += [rng.choice(string.ascii_uppercase), rng.choice(string.digits), rng.choice(SYMBOLS)]
    rng.shuffle(chars)
    return "".join(chars)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


# -- the secrets --------------------------------------------------------------------------------


def aws_access_key_id() -> str:
    return rng.choice(["AKIA", "ASIA"]) + run(UPPER_DIGITS, 16)


def aws_secret_access_key() -> str:
    return mixed(B64, 40)


def github_token() -> str:
    if rng.random() < 0.25:
        return "github_pat_" + mixed(ALNUM, 22) + "_" + mixed(ALNUM, 59)
    return rng.choice(["ghp", "gho", "ghu", "ghs", "ghr"]) + "_" + mixed(ALNUM, 36)


def gitlab_token() -> str:
    return rng.choice(["glpat", "glpat", "gldt", "glrt"]) + "-" + mixed(ALNUM + "_-", 20)


def openai_key() -> str:
    kind = rng.choice(["legacy", "proj", "proj", "svcacct", "admin"])
    if kind == "legacy":
        return "sk-" + mixed(ALNUM, 20) + "T3BlbkFJ" + mixed(ALNUM, 20)
    return f"sk-{kind}-" + mixed(ALNUM + "_-", rng.randint(40, 120))


def anthropic_key() -> str:
    kind = rng.choice(["api03", "api03", "admin01"])
    return f"sk-ant-{kind}-" + mixed(ALNUM + "_-", 93) + "AA"


def google_key() -> str:
    return "AIza" + mixed(ALNUM + "_-", 35)


def stripe_key() -> str:
    kind = rng.choice(["sk_live", "rk_live", "sk_test", "rk_test", "whsec"])
    return f"{kind}_" + mixed(ALNUM, rng.choice([24, 32, 99]) if kind != "whsec" else 32)


def slack_token() -> str:
    kind = rng.choice(["xoxb", "xoxp", "xoxa", "xoxo", "xoxs", "xoxr", "xapp", "hook"])
    if kind == "xapp":
        return f"xapp-1-A{run(UPPER_DIGITS, 10)}-{run(string.digits, 13)}-{run(HEX, 64)}"
    if kind == "hook":
        return f"https://hooks.slack.com/services/T{run(UPPER_DIGITS, 8)}/B{run(UPPER_DIGITS, 8)}/{mixed(ALNUM, 24)}"
    return f"{kind}-{run(string.digits, 12)}-{run(string.digits, 13)}-{mixed(ALNUM, 24)}"


def npm_token() -> str:
    return "npm_" + mixed(ALNUM, 36)


def pypi_token() -> str:
    return "pypi-AgEIcHlwaS5vcmc" + mixed(B64URL, 70)


def huggingface_token() -> str:
    return "hf_" + run(string.ascii_letters, 34)


def sendgrid_key() -> str:
    return "SG." + mixed(B64URL, 22) + "." + mixed(B64URL, 43)


def jwt() -> str:
    alg = rng.choice(["HS256", "RS256", "ES256"])
    header = b64url(json.dumps({"alg": alg, "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {
        "sub": run(string.digits, 8),
        "name": rng.choice(["ops", "svc-deploy", "jo"]),
        "iat": rng.randint(1_600_000_000, 1_800_000_000),
    }
    payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
    return f"{header}.{payload}.{b64url(rng.randbytes(32 if alg == 'HS256' else 64))}"


def pem_block() -> str:
    kind = rng.choice(
        ["RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY"]
    )
    lines = [run(B64, 64) for _ in range(rng.randint(3, 6))]
    return f"-----BEGIN {kind}-----\n" + "\n".join(lines) + f"\n-----END {kind}-----"


def pgp_block() -> str:
    lines = [run(B64, 64) for _ in range(rng.randint(3, 6))]
    return (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
        + "\n".join(lines)
        + "\n="
        + run(B64, 4)
        + "\n-----END PGP PRIVATE KEY BLOCK-----"
    )


def putty_key() -> str:
    return (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy@ci\nPublic-Lines: 2\n"
        + run(B64, 64) + "\n" + run(B64, 12) + "\nPrivate-Lines: 1\n" + run(B64, 44) + "\nPrivate-MAC: " + run(HEX, 64)
    )  # fmt: skip


def url_with_password() -> str:
    user = rng.choice(["app", "svc_orders", "deploy", "admin", "ci", "reporting"])
    host = rng.choice(["db.internal", "10.0.3.17", "pg-main.prod.example.net", "cache-1", "mq.internal"])
    secret = rng.choice([password(), mixed(ALNUM, 24)])
    form = rng.choice(
        ["postgresql", "postgres", "mysql", "mongodb+srv", "redis", "amqp", "https-git", "jdbc", "ftp"]
    )
    if form == "redis":
        return f"redis://:{secret}@{host}:6379/0"
    if form == "https-git":
        return f"https://{user}:{mixed(ALNUM, 32)}@github.com/acme/deploy-tools.git"
    if form == "jdbc":
        return f"jdbc:mysql://{user}:{secret}@{host}:3306/orders"
    port = {
        "postgresql": 5432,
        "postgres": 5432,
        "mysql": 3306,
        "mongodb+srv": 27017,
        "amqp": 5672,
        "ftp": 21,
    }[form]
    return f"{form}://{user}:{secret}@{host}:{port}/main"


def bearer() -> str:
    return rng.choice([mixed(ALNUM, 40), mixed(HEX + "ABCDEF", 48), mixed(B64URL, 43)])


# -- the surrounding text ------------------------------------------------------------------------

Make = Callable[[], tuple[str, str]]


def contexts(secret: str, name: str) -> list[tuple[str, str]]:
    """The same secret in a chat line, a note, a config snippet and a stack trace."""
    return [
        ("chat", f"here's the {name} you asked for: {secret} -- rotate it after the demo"),
        (
            "note",
            f"Staging setup (updated Tuesday)\n- region eu-west-1\n- {name}: {secret}\n- ask Priya before touching prod",
        ),
        ("config", f"# {name}\n{name.upper().replace(' ', '_')}={secret}\nLOG_LEVEL=info"),
        (
            "trace",
            'Traceback (most recent call last):\n  File "/srv/app/client.py", line 88, in connect\n'
            f'    raise AuthError(f"rejected credential {{cred}}")\nAuthError: rejected credential {secret}',
        ),
    ]


TOKEN_CLASSES: list[tuple[str, str, Callable[[], str]]] = [
    ("aws-access-key-id", "aws access key id", aws_access_key_id),
    ("github-token", "github token", github_token),
    ("gitlab-token", "gitlab token", gitlab_token),
    ("openai-api-key", "openai key", openai_key),
    ("anthropic-api-key", "anthropic key", anthropic_key),
    ("google-api-key", "maps key", google_key),
    ("stripe-key", "stripe key", stripe_key),
    ("slack-token", "slack token", slack_token),
    ("npm-token", "npm token", npm_token),
    ("pypi-token", "pypi upload token", pypi_token),
    ("huggingface-token", "hub token", huggingface_token),
    ("sendgrid-key", "sendgrid key", sendgrid_key),
    ("jwt", "session jwt", jwt),
]

# (name, spelling of the assignment); {v} is the value.
ASSIGNMENT_SPELLINGS: list[tuple[str, str]] = [
    ("env", "{name}={v}"),
    ("shell", "export {name}={v}"),
    ("shell-quoted", 'export {name}="{v}"'),
    ("yaml", "{name}: {v}"),
    ("yaml-quoted", "{name}: '{v}'"),
    ("toml", '{name} = "{v}"'),
    ("json", '{{"{name}": "{v}", "region": "eu-west-1"}}'),
    ("python-kwarg", 'client = Client(host="db.internal", {name}="{v}")'),
    ("python-annotated", 'def connect({name}: str = "{v}") -> None:'),
    ("php", "'{name}' => '{v}',"),
    ("go", '{name} := "{v}"'),
    ("xml", "<{name}>{v}</{name}>"),
    ("ini", "[database]\nhost = db.internal\n{name} = {v}"),
    ("cli", "psql-sync --{name} {v} --dry-run"),
    ("cli-equals", "deployctl push --{name}={v}"),
    ("dotnet", "Server=db.internal;Database=orders;User Id=app;{name}={v};"),
    ("escaped-json", 'payload = "{{\\"{name}\\": \\"{v}\\"}}"'),
]
ASSIGNMENT_NAMES = [
    "password", "passwd", "pwd", "secret", "token", "api_key", "apikey", "access_key", "private_key",
    "client_secret", "DB_PASSWORD", "GITHUB_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "FOO_API_KEY",
    "apiKey", "clientSecret", "accessToken", "dbPassword", "auth_token", "passphrase", "SECRET_KEY",
    "JWT_SECRET", "x-api-key", "SLACK_SIGNING_SECRET", "refresh_token", "Password", "PASSWORD",
]  # fmt: skip
CHAT_ASSIGNMENTS = [
    "my password is {v}",
    "the new wifi password is {v} btw",
    "FYI the db password was {v} until yesterday",
    "the API key is {v}, keep it out of the repo",
    "pw: {v}",
    "Password: `{v}`",
]


def assignment_value(name: str) -> str:
    if "pass" in name.lower() or "pwd" in name.lower():
        return rng.choice([password(), password(), "hunter2hunter2", mixed(ALNUM, 12), run(string.digits, 8)])
    return rng.choice([mixed(ALNUM, 32), mixed(HEX + "ABCDEF", 40), mixed(B64URL, 43), password()])


def cases() -> list[dict[str, str]]:
    out: list[dict[str, str]] = []

    def add(secret_class: str, spelling: str, text: str, secret: str) -> None:
        out.append(
            {"class": secret_class, "spelling": spelling, "variant": "plain", "text": text, "secret": secret}
        )

    for secret_class, name, make in TOKEN_CLASSES:
        for context, _ in contexts("", name):
            secret = make()
            text = dict(contexts(secret, name))[context]
            if context == "config" and secret_class in (
                "github-token",
                "openai-api-key",
                "anthropic-api-key",
            ):
                # The conventional variable names: the provider's own class is reported first.
                var = {"github-token": "GITHUB_TOKEN", "openai-api-key": "OPENAI_API_KEY"}.get(
                    secret_class, "ANTHROPIC_API_KEY"
                )
                text = f"{var}={secret}\nLOG_LEVEL=info"
            add(secret_class, f"{context}", text, secret)
    for _ in range(4):
        secret = aws_secret_access_key()
        ini = f"[default]\nregion = eu-west-1\naws_secret_access_key = {secret}"
        add("credential-assignment", "aws-secret-ini", ini, secret)
        add("credential-assignment", "aws-secret-env", f"AWS_SECRET_ACCESS_KEY={secret}", secret)
    for make, label in ((pem_block, "pem"), (pgp_block, "pgp"), (putty_key, "putty")):
        for context in ("note", "config", "chat"):
            secret = make()
            if context == "config":
                secret = secret.replace("\n", "\n    ")  # a YAML block, indented
            text = {
                "note": f"Bastion key, do not share:\n{secret}",
                "config": f"ssh:\n  host: bastion.internal\n  identity: |\n    {secret}",
                "chat": f"pasting the deploy key here so you can copy it\n{secret}\nthanks!",
            }[context]
            add("private-key", f"{label}-{context}", text, secret)
    for _ in range(12):
        secret = url_with_password()
        form = rng.choice(
            [
                "DATABASE_URL={u}",
                "connect with `{u}` from the bastion",
                "sqlalchemy.url = {u}",
                "error: could not connect to {u}: timeout",
            ]
        )
        add("url-credentials", "url", form.format(u=secret), secret)
    for _ in range(4):
        token = bearer()
        add(
            "authorization-header",
            "header",
            f"curl -H 'Authorization: Bearer {token}' https://api.internal/v1/jobs",
            token,
        )
        basic = base64.b64encode(f"{rng.choice(['svc', 'ops'])}:{password()}".encode()).decode()
        add("authorization-header", "basic", f"Authorization: Basic {basic}", basic)
        token = bearer()
        add("authorization-header", "bearer-chat", f"just send Bearer {token} with every request", token)
    for spelling, form in ASSIGNMENT_SPELLINGS:
        for name in rng.sample(ASSIGNMENT_NAMES, 3):
            if spelling in ("cli", "cli-equals", "xml") and not name.replace("_", "").isalnum():
                continue
            value = assignment_value(name)
            add("credential-assignment", spelling, form.format(name=name, v=value), value)
    for form in CHAT_ASSIGNMENTS:
        for _ in range(2):
            value = assignment_value("api_key" if "API key" in form else "password")
            add("credential-assignment", "chat", form.format(v=value), value)
    return out


# -- variants -------------------------------------------------------------------------------------

INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


def zero_width(case: dict[str, str]) -> dict[str, str]:
    """Invisible characters inside the secret (and the key name, for an assignment)."""
    secret = case["secret"]
    chars = list(secret)
    for _ in range(rng.randint(1, 3)):
        chars.insert(rng.randint(1, len(chars) - 1), rng.choice(INVISIBLE))
    split = "".join(chars)
    return {**case, "variant": "zero-width", "text": case["text"].replace(secret, split, 1), "secret": split}


def fullwidth(case: dict[str, str]) -> dict[str, str]:
    """The secret spelled in fullwidth forms (U+FF01..U+FF5E), which NFKC maps back to ASCII."""
    secret = case["secret"]
    wide = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in secret)
    return {**case, "variant": "fullwidth", "text": case["text"].replace(secret, wide, 1), "secret": wide}


def _escape_third(line: str, secret: str) -> str:
    """The JSON line with the secret's third character as a \\uXXXX escape (see the docstring)."""
    encoded = json.dumps(secret, ensure_ascii=True)[1:-1]
    at = 0
    for _ in range(2):  # skip two characters, escapes counted as one
        at += 6 if encoded.startswith("\\u", at) else (2 if encoded[at] == "\\" else 1)
    if encoded.startswith("\\", at):
        return line
    escaped = encoded[:at] + f"\\u{ord(encoded[at]):04x}" + encoded[at + 1 :]
    return line.replace(encoded, escaped)


def main() -> None:
    base = cases()
    rows = list(base)
    singles = [c for c in base if "\n" not in c["secret"]]
    rows += [zero_width(c) for c in rng.sample(singles, 40)]
    rows += [fullwidth(c) for c in rng.sample(singles, 30)]
    lines = []
    for row in rows:
        line = json.dumps(row, ensure_ascii=True)
        lines.append(_escape_third(line, row["secret"]))
        assert json.loads(lines[-1]) == row
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} lines -> {OUT}")


if __name__ == "__main__":
    main()

"""The app manifests: valid for Slack, and exactly what the code uses (no more, no less)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
import yaml

from slackapp.blocks.help import WHAT_EACH_WORD_DOES
from slackapp.config import BOT_SCOPES, COMMAND, COMMAND_WORDS, OAUTH_REDIRECT_PATH, USAGE_HINT
from slackapp.server import EVENTS_PATH

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = Path(__file__).with_name("slack-manifest-schema") / "manifest.schema.1.0.0.json"
HTTP_MANIFEST = ROOT / "manifest.yml"
SOCKET_MODE_MANIFEST = ROOT / "manifest.socket-mode.yml"
CONFIGURATION = ROOT / "docs" / "configuration.md"
WORKPLACES = ROOT / "docs" / "workplaces.md"
DEPLOY = ROOT / "docs" / "deploy.md"


def load(path: Path) -> dict[str, Any]:
    loaded = yaml.safe_load(path.read_text())
    assert isinstance(loaded, dict)
    return loaded


def validator() -> jsonschema.Draft7Validator:
    assert SCHEMA.is_file(), f"Slack's manifest schema is missing: {SCHEMA}"
    return jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()))


@pytest.mark.parametrize("path", [HTTP_MANIFEST, SOCKET_MODE_MANIFEST], ids=lambda p: p.name)
def test_manifest_validates_against_slacks_schema(path: Path) -> None:
    problems = [
        f"{list(e.absolute_path)}: {e.message}" for e in validator().iter_errors(load(path))
    ]
    assert problems == []


def test_the_schema_check_is_not_a_formality() -> None:
    broken = load(HTTP_MANIFEST)
    broken["features"]["slash_commands"][0]["command"] = "varulv"  # no leading slash
    broken["settings"]["interactivity"]["request_url"] = "varulv.example.com"
    assert len(list(validator().iter_errors(broken))) == 2


def test_bot_scopes_are_exactly_the_ones_the_app_asks_for() -> None:
    assert "users:read" in BOT_SCOPES, "people are named as Slack shows them (users.info)"
    for path in (HTTP_MANIFEST, SOCKET_MODE_MANIFEST):
        assert load(path)["oauth_config"]["scopes"] == {"bot": list(BOT_SCOPES)}, path.name


def handled_events() -> set[str]:
    listeners = (ROOT / "slackapp" / "listeners").glob("*.py")
    return {
        event
        for source in listeners
        for event in re.findall(r'app\.event\("([a-z_]+)"\)', source.read_text())
    }


def test_bot_events_are_exactly_the_ones_the_app_handles() -> None:
    handled = handled_events()
    assert handled >= {"app_home_opened", "app_uninstalled", "tokens_revoked"}
    for path in (HTTP_MANIFEST, SOCKET_MODE_MANIFEST):
        events = load(path)["settings"]["event_subscriptions"]["bot_events"]
        assert sorted(events) == sorted(handled), path.name


def test_the_command_and_its_usage_hint() -> None:
    for path in (HTTP_MANIFEST, SOCKET_MODE_MANIFEST):
        (command,) = load(path)["features"]["slash_commands"]
        assert command["command"] == COMMAND, path.name
        assert command["usage_hint"] == USAGE_HINT, path.name
    manifest = load(HTTP_MANIFEST)
    assert set(WHAT_EACH_WORD_DOES) == set(COMMAND_WORDS), "help says what every word does"
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True


def test_every_address_is_one_the_app_serves() -> None:
    manifest = load(HTTP_MANIFEST)
    served = [
        (manifest["features"]["slash_commands"][0]["url"], EVENTS_PATH),
        (manifest["settings"]["event_subscriptions"]["request_url"], EVENTS_PATH),
        (manifest["settings"]["interactivity"]["request_url"], EVENTS_PATH),
        *[(url, OAUTH_REDIRECT_PATH) for url in manifest["oauth_config"]["redirect_urls"]],
    ]
    origins = set()
    for url, path in served:
        parts = urlsplit(url)
        assert (parts.scheme, parts.path) == ("https", path), url
        origins.add(parts.netloc)
    assert len(origins) == 1, "one deployment address throughout"
    assert manifest["settings"]["socket_mode_enabled"] is False


def test_socket_mode_manifest_is_the_same_app_without_addresses() -> None:
    expected = copy.deepcopy(load(HTTP_MANIFEST))
    del expected["features"]["slash_commands"][0]["url"]
    del expected["settings"]["event_subscriptions"]["request_url"]
    del expected["settings"]["interactivity"]["request_url"]
    del expected["oauth_config"]["redirect_urls"]
    expected["settings"]["socket_mode_enabled"] = True
    assert load(SOCKET_MODE_MANIFEST) == expected


def test_token_rotation_is_off_and_the_docs_say_how_to_turn_it_on() -> None:
    for path in (HTTP_MANIFEST, SOCKET_MODE_MANIFEST):
        assert load(path)["settings"]["token_rotation_enabled"] is False, path.name
    rotating = load(HTTP_MANIFEST)
    rotating["settings"]["token_rotation_enabled"] = True
    assert list(validator().iter_errors(rotating)) == []
    rotating["settings"]["token_rotation_enabled"] = "yes"
    assert list(validator().iter_errors(rotating)) != [], "the schema checks the setting"
    assert "`token_rotation_enabled: true`" in WORKPLACES.read_text()


@pytest.mark.parametrize("document", [CONFIGURATION, DEPLOY], ids=lambda p: p.name)
def test_the_docs_justify_every_scope_and_no_other(document: Path) -> None:
    """The configuration guide, and the deployment guide for Slack's Marketplace review."""
    rows = re.findall(r"^\| `([a-z:._]+)` \| (.+?) \|$", document.read_text(), flags=re.MULTILINE)
    scopes = {scope: why for scope, why in rows if ":" in scope or scope == "commands"}
    assert sorted(scopes) == sorted(BOT_SCOPES)
    assert all(len(why.strip()) > 10 for why in scopes.values())


def test_the_configuration_guide_documents_every_variable() -> None:
    config = (ROOT / "slackapp" / "config.py").read_text()
    read = set(re.findall(r'(?:env|environ)\.get\("([A-Z_]+)"', config))
    read |= set(re.findall(r'_(?:seconds|whole_number)\(\s*"([A-Z_]+)"', config))
    assert {"PORT", "WEB_CONCURRENCY", "VARULV_DATABASE_WAIT_SECONDS"} <= read
    assert "SLACK_CLIENT_ID" in read and "SLACK_REDIRECT_URI" in read
    documented = CONFIGURATION.read_text()
    assert [name for name in sorted(read) if f"`{name}`" not in documented] == []


def test_organisation_wide_installs_are_offered_and_the_schema_checks_the_setting() -> None:
    for path in (HTTP_MANIFEST, SOCKET_MODE_MANIFEST):
        assert load(path)["settings"]["org_deploy_enabled"] is True, path.name
    broken = load(HTTP_MANIFEST)
    broken["settings"]["org_deploy_enabled"] = "yes"
    assert list(validator().iter_errors(broken)) != [], "the schema checks the setting"

"""``/slack/install``: the page a workspace admin lands on from Slack's Marketplace or a link.

It says what Varulv does and what it keeps, links the privacy policy and a support contact
(``VARULV_PRIVACY_URL``, ``VARULV_SUPPORT_URL``) and carries the "Add to Slack" button. Bolt
still issues the OAuth state and its cookie and builds the button's link; only the page's HTML
is Varulv's (``OAuthFlow.build_install_page_html``, Bolt's hook for it).
"""

from __future__ import annotations

from html import escape

from slack_bolt.oauth.oauth_flow import OAuthFlow
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_bolt.request import BoltRequest
from slack_sdk import WebClient

BUTTON = (
    '<img alt="Add to Slack" height="40" width="139" '
    'src="https://platform.slack-edge.com/img/add_to_slack.png" '
    'srcset="https://platform.slack-edge.com/img/add_to_slack.png 1x, '
    'https://platform.slack-edge.com/img/add_to_slack@2x.png 2x">'
)

HEAD = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{title}</title>
<style>
body {{{{ font-family: system-ui, sans-serif; max-width: 36rem; margin: 2rem auto;
  padding: 0 1rem; line-height: 1.5; color: #1d1c1d; }}}}
h1 {{{{ margin-bottom: 0.2rem; }}}}
.button {{{{ margin: 1.5rem 0; }}}}
small {{{{ color: #616061; }}}}
</style>
</head>
<body>"""
"""Both pages' head, a template of a template: its braces doubled twice, since each page's
own ``format`` comes after."""

PAGE = (
    HEAD.format(title="Varulv for Slack")
    + """
<h1>Varulv</h1>
<p><strong>One Night Ultimate Werewolf for your channel's fika break.</strong></p>
<p>Type <code>/varulv</code> in a channel and people join with a click. Everyone gets a
secret card in a private message, the night plays itself out, the table argues for five
minutes, everyone casts one sealed ballot, and Varulv reveals what happened. Bots fill empty
seats, so three people get a real five-seat game.</p>
<p class="button"><a href="{url}">{button}</a></p>
<h2>What Varulv keeps</h2>
<p>The games played in your workspace (seats, cards, choices and ballots) and the points they
earned, each channel's settings and schedule, the names of the people who played, and the bot
token Slack gives it. Nothing is shared with anyone: Varulv uses no other service.
Ended games are deleted after {days} days; points and season results stay. Anyone can
erase themselves with <code>/varulv forget me</code>, and removing Varulv from the workspace
deletes its token.</p>
<p>{privacy} · {support}</p>
<p><small>Varulv asks Slack for: {scopes}.</small></p>
</body>
</html>
"""
)


def landing_page(
    url: str,
    scopes: list[str],
    retention_days: int,
    privacy_url: str | None,
    support_url: str | None,
) -> str:
    """The page, its "Add to Slack" button linking to ``url`` (Slack's authorize page)."""
    privacy = (
        f'<a href="{escape(privacy_url)}">Privacy policy</a>'
        if privacy_url
        else "Privacy policy: PRIVACY.md, shipped with Varulv"
    )
    support = (
        f'<a href="{escape(support_url)}">Support</a>'
        if support_url
        else "Support: the people who run this Varulv"
    )
    return PAGE.format(
        url=escape(url),
        button=BUTTON,
        days=retention_days,
        privacy=privacy,
        support=support,
        scopes=", ".join(f"<code>{escape(scope)}</code>" for scope in scopes),
    )


ADDED = (
    HEAD.format(title="Varulv is added")
    + """
<h1>Varulv is added</h1>
{next}
</body>
</html>
"""
)


def added_page(
    app_id: str | None,
    team_id: str | None,
    enterprise_url: str | None,
    org_wide: bool,
) -> str:
    """The page after an admin added Varulv: what to do next, and a way back into Slack. An
    org-wide install is added to the organisation's workspaces next, from its admin pages."""
    if org_wide:
        pages = (
            f"{enterprise_url}manage/organization/apps/profile/{app_id}/workspaces/add"
            if enterprise_url and app_id
            else None
        )
        where = (
            f'<a href="{escape(pages)}">the organisation\'s app settings</a>'
            if pages
            else "the organisation's app settings"
        )
        steps = (
            "<p>It is added to your organisation. Next, add it to the workspaces that should "
            f"play, from {where}. Then, in a channel: <code>/invite @Varulv</code>, and "
            "<code>/varulv</code> to open a table.</p>"
        )
    else:
        app = f"slack://app?team={team_id}&id={app_id}" if team_id and app_id else "slack://open"
        browser = f"https://app.slack.com/client/{team_id}" if team_id else "https://app.slack.com/"
        steps = (
            "<p>In a channel: <code>/invite @Varulv</code>, then <code>/varulv</code> to open a "
            "table. People join with a click.</p>"
            f'<p><a href="{escape(app)}">Open Slack</a> · '
            f'<a href="{escape(browser)}">Slack in the browser</a></p>'
        )
    return ADDED.format(next=steps)


class LandingOAuthFlow(OAuthFlow):
    """Bolt's OAuth flow, with Varulv's landing page at the install path."""

    def __init__(
        self,
        *,
        client: WebClient,
        settings: OAuthSettings,
        retention_days: int,
        privacy_url: str | None,
        support_url: str | None,
    ) -> None:
        super().__init__(client=client, settings=settings)
        self.retention_days = retention_days
        self.privacy_url = privacy_url
        self.support_url = support_url

    def build_install_page_html(self, url: str, request: BoltRequest) -> str:
        return landing_page(
            url,
            list(self.settings.scopes or ()),
            self.retention_days,
            self.privacy_url,
            self.support_url,
        )

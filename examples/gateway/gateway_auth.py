"""LiteLLM custom_auth hook for planrun's gateway: one key, read from the environment.

Without a database LiteLLM answers any key but the master key with 400 "No connected db."
(proxy/auth/user_api_key_auth.py), where the TaoToken gateway it stands in for says 401.
This hook accepts exactly the master key (general_settings.master_key, itself read from the
environment) and refuses any other with 401. It also applies general_settings.model_rpm_limit
({model name: requests per minute}) to that key, which LiteLLM's rate limiter enforces with
429 and Retry-After.
"""
import secrets

from fastapi import HTTPException, Request
from litellm.proxy._types import UserAPIKeyAuth


async def user_api_key_auth(request: Request, api_key: str) -> UserAPIKeyAuth:
    from litellm.proxy import proxy_server  # resolved config, loaded before any request

    want = proxy_server.master_key or ""
    got = api_key.removeprefix("Bearer ").strip()
    if not want or not secrets.compare_digest(got.encode(), want.encode()):
        raise HTTPException(status_code=401, detail="invalid API key")
    limits = (proxy_server.general_settings or {}).get("model_rpm_limit") or {}
    return UserAPIKeyAuth(api_key="gateway-key", metadata={"model_rpm_limit": limits})

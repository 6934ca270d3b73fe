# Build the Windows installer (untested: no Windows machine here). From the project folder:
#
#   powershell -ExecutionPolicy Bypass -File installer\windows\build_windows.ps1 [-NoOcr]
#
# Needs Python 3.11+ (python.org build) and Inno Setup 6 (iscc.exe on PATH or in its default
# folder). Leaves dist\capdesk-VERSION-windows-x64-setup.exe. Speech uses Windows' own voices (SAPI 5).
param([switch]$NoOcr)
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..\..")
$version = (Select-String -Path capdesk\__init__.py -Pattern '^__version__ = "(.*)"').Matches[0].Groups[1].Value
$venv = "build\installer-venv"
$prepareArgs = @("installer\prepare_env.py", $venv)
if ($NoOcr) { $prepareArgs += "--no-ocr" }
python @prepareArgs
if ($LASTEXITCODE -ne 0) { throw "prepare_env.py failed" }
$py = Join-Path $venv "Scripts\python.exe"
$env:CAPDESK_BUNDLE_OCR = if ($NoOcr) { "0" } else { "1" }
$env:CAPDESK_VERSION = $version
& $py -m PyInstaller --noconfirm --clean --log-level WARN `
  --distpath build\pyinstaller\dist --workpath build\pyinstaller\work installer\capdesk.spec
if ($LASTEXITCODE -ne 0) { throw "PyInstaller failed" }
& build\pyinstaller\dist\capdesk\capdesk.exe --version
& build\pyinstaller\dist\capdesk\capdesk.exe models verify
if ($LASTEXITCODE -ne 0) { throw "the frozen app did not start" }
# Inno Setup wants an .ico for the installer itself.
& $py -c "from PIL import Image; Image.open('resources/icons/capdesk.png').save('build/pyinstaller/capdesk.ico', sizes=[(16,16),(32,32),(48,48),(64,64),(128,128),(256,256)])"
$iscc = (Get-Command iscc.exe -ErrorAction SilentlyContinue).Source
if (-not $iscc) { $iscc = "${env:ProgramFiles(x86)}\Inno Setup 6\ISCC.exe" }
& $iscc "/DAppVersion=$version" installer\windows\capdesk.iss
if ($LASTEXITCODE -ne 0) { throw "Inno Setup failed" }
Get-ChildItem dist\capdesk-*-setup.exe

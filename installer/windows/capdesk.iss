; Inno Setup 6 script for the Windows installer (untested: no Windows machine here).
; Built by installer\windows\build_windows.ps1 after PyInstaller has made build\pyinstaller\dist\capdesk.
; Installs per machine or per user (the person chooses), adds Start-menu entries, optionally a
; desktop icon and the `capdesk` command on PATH; the uninstaller removes all of it.
#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif
#define Root "..\.."

[Setup]
AppId={{6F0C7E52-4C1B-4E38-9B7A-1E2C9A6D5F31}
AppName=CapDesk
AppVersion={#AppVersion}
AppPublisher=CapDesk
AppPublisherURL=https://capdesk.org
DefaultDirName={autopf}\CapDesk
DefaultGroupName=CapDesk
DisableProgramGroupPage=yes
OutputDir={#Root}\dist
OutputBaseFilename=capdesk-{#AppVersion}-windows-x64-setup
SetupIconFile={#Root}\build\pyinstaller\capdesk.ico
UninstallDisplayIcon={app}\capdesk-gui.exe
Compression=lzma2/max
SolidCompression=yes
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ChangesEnvironment=yes
WizardStyle=modern

[Tasks]
Name: "desktopicon"; Description: "Put a CapDesk icon on the desktop"; Flags: unchecked
Name: "addtopath"; Description: "Add the capdesk command to PATH (for the command line and scripts)"

[Files]
Source: "{#Root}\build\pyinstaller\dist\capdesk\*"; DestDir: "{app}"; Flags: recursesubdirs createallsubdirs ignoreversion

[Icons]
Name: "{autoprograms}\CapDesk"; Filename: "{app}\capdesk-gui.exe"; Comment: "Describe pictures aloud and write their alt text"
Name: "{autodesktop}\CapDesk"; Filename: "{app}\capdesk-gui.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\capdesk-gui.exe"; Description: "Start CapDesk"; Flags: nowait postinstall skipifsilent

[Code]
function EnvKey(): String;
begin
  if IsAdminInstallMode then
    Result := 'SYSTEM\CurrentControlSet\Control\Session Manager\Environment'
  else
    Result := 'Environment';
end;

function EnvRoot(): Integer;
begin
  if IsAdminInstallMode then Result := HKEY_LOCAL_MACHINE else Result := HKEY_CURRENT_USER;
end;

procedure CurStepChanged(CurStep: TSetupStep);
var Path: String;
begin
  if (CurStep = ssPostInstall) and WizardIsTaskSelected('addtopath') then
  begin
    if not RegQueryStringValue(EnvRoot(), EnvKey(), 'Path', Path) then Path := '';
    if Pos(';' + Uppercase(ExpandConstant('{app}')) + ';', ';' + Uppercase(Path) + ';') = 0 then
    begin
      if (Path <> '') and (Copy(Path, Length(Path), 1) <> ';') then Path := Path + ';';
      RegWriteExpandStringValue(EnvRoot(), EnvKey(), 'Path', Path + ExpandConstant('{app}'));
    end;
  end;
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
var Path, App: String; P: Integer;
begin
  if CurUninstallStep = usPostUninstall then
  begin
    App := ExpandConstant('{app}');
    if RegQueryStringValue(EnvRoot(), EnvKey(), 'Path', Path) then
    begin
      P := Pos(';' + Uppercase(App), ';' + Uppercase(Path));
      if P > 0 then
      begin
        Delete(Path, P, Length(App) + 1);
        RegWriteExpandStringValue(EnvRoot(), EnvKey(), 'Path', Path);
      end;
    end;
  end;
end;

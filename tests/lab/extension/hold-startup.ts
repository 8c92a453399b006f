// st2 lab extension for omp: hold omp's start-up inside its session_start hooks until the file
// $ST2_LAB_HOLD_STARTUP exists, announcing the hold by writing "$ST2_LAB_HOLD_STARTUP.held".
// omp 18.2.3 awaits every session_start handler inside InteractiveMode.init(), after its composer
// is live (drawn idle, taking keystrokes) and before init's last step lifts the composer's
// bootstrap submit gate (`editor.disableSubmit`), so the hold keeps that gate up for as long as a
// test needs: the window in which a Return is ignored and the typed text stays in the composer.
// Loaded with `-e`; without the variable it does nothing.
import { existsSync, writeFileSync } from "node:fs";

export default function (pi: any) {
  const release = process.env.ST2_LAB_HOLD_STARTUP;
  if (!release) return;
  pi.on("session_start", async () => {
    writeFileSync(`${release}.held`, "held\n");
    while (!existsSync(release)) await new Promise(resolve => setTimeout(resolve, 50));
  });
}

/** What every motion operation's description ends with. */
export const MOTION_NOTE =
  'Motion is real and synchronous: the answer comes when the arm has arrived, failed or was stopped; success false means it did ' +
  'not reach the target (message says why; nothing more moves). If another motion, trajectory or sequence holds the arm the call ' +
  'fails at once (no queue): wait, or call {op:stop}. Units: metres and radians; frame base_link (x forward, y left, z up, origin ' +
  'at the robot foot).';
